#!/usr/bin/env bash
# Installs the Debian 12 packages attnspec needs, only those missing (idempotent). Runs as root or
# through sudo. The CUDA toolkit (nvcc) is not a Debian package here: when nvcc is absent the build
# configures with ATTNSPEC_CUDA=AUTO -> OFF and links the CPU stub.
set -euo pipefail
pkgs=(build-essential cmake git pkg-config libeigen3-dev libspectra-dev libhdf5-dev hdf5-tools
      libboost-program-options-dev catch2 liblapacke-dev libopenblas-dev libbenchmark-dev
      python3 python3-h5py python3-numpy python3-matplotlib python3-venv python3-dev
      clang-format clang-tidy clang libclang-rt-14-dev
      openmpi-bin libopenmpi-dev ccache)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
