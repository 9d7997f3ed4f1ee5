#!/usr/bin/env bash
# scripts/gpu-bundle.sh [--python PY] OUT.tar.xz: a build that runs on the GPU machine (CUDA 13,
# CMake, Python with PyTorch and h5py, but no Debian development libraries and no network).
#   1. configures build-bundle/ (Release, CUDA on, sm_90 only, warnings as errors;
#      $ATTNSPEC_BUNDLE_BUILD names another directory) and builds the CLI, the GPU backend, the
#      gpu test program and the GPU benchmarks (bench/gpu/bench_*.cpp, each running its PyTorch
#      peer bench/gpu/peer_*.py);
#   2. collects them with the shared libraries they need (ldd), except glibc's (libc, libm,
#      libpthread, libdl, librt, libresolv, ld-linux) and the CUDA libraries (libcuda, libcudart,
#      libcublas*, libcusolver*, libcusparse*, libnvJitLink*, libnvrtc*, anything under
#      /usr/local/cuda or an nvidia/ wheel), which the GPU machine has;
#   3. adds `run` (puts the bundle's lib/ and the CUDA libraries on LD_LIBRARY_PATH and runs one
#      of its programs), scripts/gpu-check.sh and the PyTorch peers under bench/ (if present);
#   4. checks with ldd (LD_LIBRARY_PATH = the bundle's lib/ only) that every library each program
#      and library of the bundle needs resolves inside lib/, to glibc or to a CUDA library, and
#      fails listing any other (it would be missing on the GPU machine);
#   5. computes the glibc floor: the highest GLIBC_x.y symbol version any ELF file of the bundle
#      requires (objdump -p); the GPU machine's glibc must be at least that;
#   6. writes MANIFEST (commit, glibc floor, the CUDA libraries needed, bundled libraries, files)
#      and OUT.tar.xz (one top folder attnspec-gpu/), and prints its size (well under 64 MiB).
# The CUDA libraries: `run` takes them from /usr/local/cuda (lib64, targets/x86_64-linux/lib,
# lib) when they are all there, else from the LD_LIBRARY_PATH entries, else from the nvidia-*
# wheels (site-packages/nvidia/*/lib) of the Python in $ATTNSPEC_PYTHON (default python3);
# `run --where-cuda` says which. This script prints what this host would use (--python PY: that
# Python's wheels).
# ATTNSPEC_BUNDLE_DROP=NAME (a self-test of step 4) deletes lib/NAME before the check, which must
# then fail naming it.
# ATTNSPEC_BUNDLE_NO_BUILD=1 packs what $ATTNSPEC_BUNDLE_BUILD already holds (no configure, no
# build).
# On the GPU machine: scripts/gpu-check.sh OUT_DIR OUT.tar.xz (or tar xJf OUT.tar.xz;
# attnspec-gpu/run attnspec gpu-check).
# Exit codes: 0 packed, 1 a build or check failed, 64 usage.
set -euo pipefail
usage() { echo "usage: scripts/gpu-bundle.sh [--python PY] OUT.tar.xz | --help"; }
py="" args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    --python)
      [ $# -ge 2 ] || { usage >&2; exit 64; }
      py=$2; shift 2 ;;
    --) shift; args+=("$@"); break ;;
    -*) echo "gpu-bundle.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -eq 1 ] || { usage >&2; exit 64; }
out=$(realpath -m "${args[0]}")
cd "$(dirname "$0")/.."
root=$PWD
bdir=${ATTNSPEC_BUNDLE_BUILD:-build-bundle}
launch=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
  launch=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
targets=(attnspec attnspec_gpu attnspec_tests_gpu)
for src in bench/gpu/bench_*.cpp; do
  [ -f "$src" ] && targets+=("$(basename "$src" .cpp)")
done
if [ "${ATTNSPEC_BUNDLE_NO_BUILD:-0}" != 1 ]; then
  mkdir -p "$bdir"
  cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DATTNSPEC_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DATTNSPEC_WERROR=ON -DATTNSPEC_BUILD_BENCH=ON \
        "${launch[@]}" >"$bdir/configure.log" 2>&1 ||
    { tail -20 "$bdir/configure.log" >&2; exit 1; }
  jobs=${ATTNSPEC_BUNDLE_JOBS:-$(nproc 2>/dev/null || echo 2)}
  cmake --build "$bdir" -j"$jobs" --target "${targets[@]}"
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top=$stage/attnspec-gpu
mkdir -p "$top/bin" "$top/lib" "$top/tests" "$top/bench" "$top/scripts"
cp "$bdir/cli/attnspec" "$top/bin/"
cp -L "$bdir/gpu/libattnspec_gpu.so" "$top/lib/"
cp "$bdir/tests/attnspec_tests_gpu" "$top/tests/"
for t in "${targets[@]}"; do
  case $t in bench_*) [ -x "$bdir/bench/$t" ] && cp "$bdir/bench/$t" "$top/bench/" ;; esac
done
[ -d bench/gpu ] && cp bench/gpu/*.py "$top/bench/" 2>/dev/null || true
cp scripts/gpu-check.sh "$top/scripts/"

# The shared libraries the programs need, but not glibc's nor CUDA's (the GPU machine has both).
glibc='^(linux-vdso|ld-linux|libc\.|libm\.|libpthread\.|libdl\.|librt\.|libresolv\.'
glibc+='|libutil\.|libanl\.|libnsl\.)'
cuda='^(libcuda\.|libcudart|libcublas|libcusolver|libcusparse|libnvJitLink|libnvrtc)'
is_cuda_path() { case $1 in /usr/local/cuda*|*/cuda/*|*/nvidia/*) return 0 ;; esac; return 1; }
is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" | tail -c 3)" = ELF ]; }
for f in "$top"/bin/* "$top"/lib/libattnspec_gpu.so "$top"/tests/* "$top"/bench/*; do
  is_elf "$f" || continue
  ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' || true
done | sort -u | while read -r name path; do
  [[ $name =~ $glibc || $name =~ $cuda || $name == libattnspec_gpu.so ]] && continue
  is_cuda_path "$path" && continue
  cp -L "$path" "$top/lib/$name"
done

[ -n "${ATTNSPEC_BUNDLE_DROP:-}" ] && rm -f "$top/lib/$ATTNSPEC_BUNDLE_DROP"
# The check: what each ELF file of the bundle needs, resolved with the bundle's lib/ alone on
# LD_LIBRARY_PATH, must be in lib/, glibc or CUDA; anything else would be missing there.
bad=$(for f in "$top"/bin/* "$top"/lib/* "$top"/tests/* "$top"/bench/*; do
  is_elf "$f" || continue
  LD_LIBRARY_PATH="$top/lib" ldd "$f" 2>&1 | while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    [[ $name =~ $glibc || $name =~ $cuda ]] && continue
    case $path in "$top"/lib/*) continue ;; esac
    [ "$path" != "not" ] && is_cuda_path "$path" && continue
    where=$([ "$path" = not ] && echo found || echo '(outside the bundle)')
    echo "  ${f#"$top"/} needs $name => $path $where"
  done
done)
nelf=0
for f in "$top"/bin/* "$top"/lib/* "$top"/tests/* "$top"/bench/*; do
  is_elf "$f" && nelf=$((nelf + 1))
done
if [ -n "$bad" ]; then
  echo "gpu-bundle.sh: libraries the GPU machine would miss (neither in the bundle's lib/," \
    "nor glibc, nor CUDA):" >&2
  echo "$bad" >&2
  exit 1
fi
bundled=() needed_cuda=()
for l in "$top"/lib/*; do [[ ${l##*/} == libattnspec_gpu* ]] || bundled+=("${l##*/}"); done
# The CUDA libraries the bundle needs from the GPU machine (the driver's libcuda aside: it is
# the machine's, never a toolkit's or a wheel's).
mapfile -t needed_cuda < <(for f in "$top"/bin/* "$top"/lib/* "$top"/tests/* "$top"/bench/*; do
  is_elf "$f" && LD_LIBRARY_PATH="$top/lib" ldd "$f" 2>/dev/null; done | awk '{ print $1 }' |
  grep -E "$cuda" | grep -v '^libcuda\.' | sort -u)
echo "ldd check: the $nelf ELF files need only lib/ (${#bundled[@]} bundled: ${bundled[*]})," \
  "glibc and CUDA (${needed_cuda[*]})"

# The glibc floor: the highest GLIBC_x.y version any ELF file of the bundle requires.
floor=0 floor_file=""
for f in "$top"/bin/* "$top"/lib/* "$top"/tests/* "$top"/bench/*; do
  is_elf "$f" || continue
  v=$({ objdump -p "$f" 2>/dev/null || readelf -V "$f" 2>/dev/null; } |
    grep -oE 'GLIBC_[0-9]+(\.[0-9]+)+' | sed 's/^GLIBC_//' | sort -V | tail -1) || true
  [ -n "$v" ] || continue
  if [ "$(printf '%s\n%s\n' "$floor" "$v" | sort -V | tail -1)" != "$floor" ]; then
    floor=$v floor_file=${f#"$top"/}
  fi
done
host_glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }')
if [ "$floor" = 0 ]; then
  floor_text="unknown (no GLIBC_ version found: objdump and readelf missing?)"
else
  floor_text="$floor (the highest GLIBC_ version required, by $floor_file)"
fi
echo "glibc floor: $floor_text; this host: ${host_glibc:-unknown}"

cat >"$top/run" <<'RUN'
#!/bin/sh
# attnspec-gpu/run PROGRAM [ARGS...]: runs bin/PROGRAM, tests/PROGRAM or bench/PROGRAM of this
# bundle with its shared libraries (lib/) first on the search path, then the CUDA libraries of
# the machine: from /usr/local/cuda when every one the bundle needs (MANIFEST) is there, else
# from the LD_LIBRARY_PATH entries, else from the nvidia-* wheels (site-packages/nvidia/*/lib)
# of the Python in $ATTNSPEC_PYTHON (default python3). gpu tests find this bundle's CLI
# through ATTNSPEC_TEST_CLI.
# run --where-cuda: says which source it takes (exit 0), or that none has them all (exit 1).
here=$(cd "$(dirname "$0")" && pwd)
needed=$(sed -n 's/^CUDA libraries needed: //p' "$here/MANIFEST" 2>/dev/null)
# has_all DIRS: every needed library is in one of the colon-separated DIRS.
has_all() {
  for n in $needed; do
    found=no old_ifs=$IFS
    IFS=:
    for d in $1; do [ -n "$d" ] && [ -e "$d/$n" ] && found=yes; done
    IFS=$old_ifs
    [ $found = yes ] || return 1
  done
  return 0
}
py=${ATTNSPEC_PYTHON:-python3}
toolkit=""
for c in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib; do
  [ -d "$c" ] && toolkit="$toolkit${toolkit:+:}$c"
done
src="" dirs=""
if [ -n "$toolkit" ] && has_all "$toolkit"; then
  src="/usr/local/cuda" dirs=$toolkit
elif [ -n "${LD_LIBRARY_PATH:-}" ] && has_all "$LD_LIBRARY_PATH"; then
  src="LD_LIBRARY_PATH"
else
  wheels=""
  for s in $("$py" -c 'import site, sysconfig
p = site.getsitepackages() + [site.getusersitepackages()]
p += [sysconfig.get_paths()[k] for k in ("purelib", "platlib")]
print("\n".join(sorted(set(p))))' 2>/dev/null); do
    for l in "$s"/nvidia/*/lib; do [ -d "$l" ] && wheels="$wheels${wheels:+:}$l"; done
  done
  if [ -n "$wheels" ] && has_all "$wheels"; then
    src="the nvidia-* wheels of $py" dirs=$wheels
  fi
fi
if [ "${1:-}" = --where-cuda ]; then
  if [ -z "$src" ]; then
    echo "CUDA libraries: not found (needed: ${needed:-none listed}; looked under" \
      "/usr/local/cuda, in LD_LIBRARY_PATH, in the nvidia-* wheels of $py)"
    exit 1
  fi
  echo "CUDA libraries: from $src${dirs:+ ($dirs)}; needed: ${needed:-none listed}"
  exit 0
fi
[ -n "$src" ] || dirs=$toolkit  # none has them all: the toolkit's, the loader says the rest
export LD_LIBRARY_PATH="$here/lib${dirs:+:$dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ATTNSPEC_GPU_BACKEND="$here/lib/libattnspec_gpu.so"
export ATTNSPEC_TEST_CLI="$here/bin/attnspec"
if [ $# -lt 1 ]; then
  echo "usage: run PROGRAM [ARGS...] | run --where-cuda (programs:" \
    "$(cd "$here" && for f in bin/* tests/* bench/*; do [ -x "$f" ] && printf '%s ' "${f#*/}"
      done))" >&2
  exit 64
fi
p=$1; shift
for d in bin tests bench; do
  [ -x "$here/$d/$p" ] && [ -f "$here/$d/$p" ] && exec "$here/$d/$p" "$@"
done
echo "run: no program '$p' in this bundle" >&2
exit 64
RUN
chmod +x "$top/run"
git -C "$root" rev-parse HEAD >"$top/COMMIT" 2>/dev/null || true
{
  echo "attnspec-gpu bundle"
  echo "commit: $(cat "$top/COMMIT" 2>/dev/null || echo unknown)"
  echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), glibc ${host_glibc:-unknown}"
  echo "glibc floor: $floor_text"
  echo "CUDA libraries needed: ${needed_cuda[*]}"
  echo "bundled libraries: ${bundled[*]}"
  echo "files:"
  (cd "$top" && find . -type f ! -name MANIFEST | sort | while read -r f; do
    printf '  %10d  %s\n' "$(stat -c %s "$f")" "${f#./}"
  done)
} >"$top/MANIFEST"
ATTNSPEC_PYTHON=${py:-${ATTNSPEC_PYTHON:-python3}} "$top/run" --where-cuda |
  sed 's/^/this host: /' || true
tar -C "$stage" -cJf "$out" attnspec-gpu
size=$(stat -c %s "$out")
echo "bundle: $out, $((size / 1024 / 1024)) MiB ($size bytes); contents:" \
  "$(find "$top"/{bin,tests,bench,lib} -mindepth 1 -maxdepth 1 | wc -l) files; MANIFEST:" \
  "glibc floor $floor"
[ "$size" -lt $((48 * 1024 * 1024)) ] ||
  { echo "bundle too large (limit 48 MiB, transfers allow 64)" >&2; exit 1; }
