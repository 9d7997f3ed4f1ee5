#!/usr/bin/env bash
# scripts/gpu-bundle.sh OUT.tar.xz: a build that runs on the GPU machine (CUDA 13, CMake, Python with
# PyTorch and h5py, but no Debian development libraries and no network).
#   1. configures build-bundle/ (Release, CUDA on, sm_90 only, warnings as errors; $ATTNSPEC_BUNDLE_BUILD
#      names another directory) and builds the CLI, the GPU backend, the gpu test program and the
#      GPU benchmarks (bench/gpu/bench_*.cpp, each running its PyTorch peer bench/gpu/peer_*.py);
#   2. collects them with the shared libraries they need (ldd), except libc/libm/libpthread/libdl/
#      librt/libresolv/ld-linux (glibc) and the CUDA libraries (libcuda, libcudart, libcublas*, libcusolver*, libcusparse*,
#      libnvJitLink*, anything under /usr/local/cuda), which the GPU machine has;
#   3. adds `run` (sets LD_LIBRARY_PATH to the bundle's lib/ and runs one of its programs),
#      scripts/gpu-check.sh and the PyTorch peers under bench/gpu/ (if present);
#   4. checks with ldd (LD_LIBRARY_PATH = the bundle's lib/ only) that every library each program
#      and library of the bundle needs resolves inside lib/, to glibc or to a CUDA library, and
#      fails listing any other (it would be missing on the GPU machine);
#   5. writes OUT.tar.xz (one top folder attnspec-gpu/) and prints its size (must stay well under
#      64 MiB).
# ATTNSPEC_BUNDLE_DROP=NAME (a self-test of step 4) deletes lib/NAME before the check, which must
# then fail naming it.
# ATTNSPEC_BUNDLE_NO_BUILD=1 packs what $ATTNSPEC_BUNDLE_BUILD already holds (no configure, no build).
# On the GPU machine: scripts/gpu-check.sh DIR OUT.tar.xz (or tar xJf OUT.tar.xz; attnspec-gpu/run
# attnspec gpu-check).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/gpu-bundle.sh OUT.tar.xz" >&2; exit 64; }
out=$(realpath -m "$1")
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
  cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DATTNSPEC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DATTNSPEC_WERROR=ON -DATTNSPEC_BUILD_BENCH=ON "${launch[@]}" >"$bdir/configure.log" 2>&1 ||
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
glibc='^(linux-vdso|ld-linux|libc\.|libm\.|libpthread\.|libdl\.|librt\.|libresolv\.|libutil\.|libanl\.|libnsl\.)'
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
    echo "  ${f#"$top"/} needs $name => $path $([ "$path" = not ] && echo found || echo '(outside the bundle)')"
  done
done)
nelf=0
for f in "$top"/bin/* "$top"/lib/* "$top"/tests/* "$top"/bench/*; do is_elf "$f" && nelf=$((nelf + 1)); done
if [ -n "$bad" ]; then
  echo "gpu-bundle.sh: libraries the GPU machine would miss (neither in the bundle's lib/, nor glibc, nor CUDA):" >&2
  echo "$bad" >&2
  exit 1
fi
bundled=() needed_cuda=()
for l in "$top"/lib/*; do [[ ${l##*/} == libattnspec_gpu* ]] || bundled+=("${l##*/}"); done
mapfile -t needed_cuda < <(for f in "$top"/bin/* "$top"/lib/* "$top"/tests/* "$top"/bench/*; do
  is_elf "$f" && LD_LIBRARY_PATH="$top/lib" ldd "$f" 2>/dev/null; done | awk '{ print $1 }' |
  grep -E "$cuda" | sort -u)
echo "ldd check: the $nelf ELF files need only lib/ (${#bundled[@]} bundled: ${bundled[*]}), glibc" \
  "and CUDA (${needed_cuda[*]})"

cat >"$top/run" <<'RUN'
#!/bin/sh
# attnspec-gpu/run PROGRAM [ARGS...]: runs bin/PROGRAM, tests/PROGRAM or bench/PROGRAM of this bundle
# with its shared libraries (lib/) first on the search path; the CUDA libraries come from the
# machine. gpu tests find this bundle's CLI through ATTNSPEC_TEST_CLI.
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The CUDA libraries where a toolkit installs them, last (the backend's RUNPATH names
# /usr/local/cuda/lib, which some installs lack).
for c in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib; do
  [ -d "$c" ] && LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$c"
done
export ATTNSPEC_GPU_BACKEND="$here/lib/libattnspec_gpu.so"
export ATTNSPEC_TEST_CLI="$here/bin/attnspec"
[ $# -ge 1 ] || { echo "usage: run PROGRAM [ARGS...] (programs: $(ls "$here/bin" "$here/tests" "$here/bench" | grep -v : | tr '\n' ' '))" >&2; exit 64; }
p=$1; shift
for d in bin tests bench; do
  [ -x "$here/$d/$p" ] && [ -f "$here/$d/$p" ] && exec "$here/$d/$p" "$@"
done
echo "run: no program '$p' in this bundle" >&2
exit 64
RUN
chmod +x "$top/run"
git -C "$root" rev-parse HEAD >"$top/COMMIT" 2>/dev/null || true
tar -C "$stage" -cJf "$out" attnspec-gpu
size=$(stat -c %s "$out")
echo "bundle: $out, $((size / 1024 / 1024)) MiB ($size bytes); contents: $(cd "$top" && ls bin tests bench lib | grep -vc :) files"
[ "$size" -lt $((48 * 1024 * 1024)) ] || { echo "bundle too large (limit 48 MiB, transfers allow 64)" >&2; exit 1; }
