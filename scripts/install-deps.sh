#!/bin/bash
# Installs what BDMPI needs on a fresh Debian 12 machine: a C compiler,
# CMake, MPICH (for the multi-node masters and to check the test programs
# against a reference MPI), Python 3 (benchmark tooling, and the generator of
# the Fortran bindings), gfortran (the Fortran bindings and their tests),
# pkg-config (test tools.install), autoconf and automake (test
# tools.autotools, the README's Autotools recipe), clang-format (the
# format.check test) and OpenBLAS (the HPC Challenge suite, a real program
# the realapp tests build with bdmpicc from Debian's source).
set -euo pipefail
pkgs=(build-essential cmake mpich libmpich-dev python3 python3-matplotlib bc procps gdb clang-format
      gfortran pkg-config autoconf automake libopenblas-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
