#!/usr/bin/env bash
# Compile-checks every CUDA C kernel module of fleet-gpu with NVRTC, without a GPU: NVRTC compiles to a cubin for a
# named architecture (sm_80 and sm_90 here) with the options NvrtcCompiler uses at run time, and needs no driver.
#
#   scripts/nvrtc-check.sh
#
# Finds a libnvrtc.so.N ($LD_LIBRARY_PATH, $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/lib/x86_64-linux-gnu); where there is none, on
# Debian 12 as root, it enables the non-free component (the original sources file is kept as
# /etc/apt/debian.sources.bak-nvrtc) and installs libnvrtc11.2 (CUDA 11.8's NVRTC, 16 MB; it knows sm_90). The
# kernels include no CUDA headers, so no -dev package is needed. Then it runs fleet-gpu's
# KernelModulesCompileWithNvrtcTest, whose FFM driver calls nvrtcCreateProgram / nvrtcCompileProgram /
# nvrtcGetProgramLog on each module and checks that the cubin holds every entry point. Exit 0: every module compiled.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

die() { echo "nvrtc-check: $*" >&2; exit 2; }

have_nvrtc() {
  local d dirs
  IFS=: read -r -a dirs <<< "${LD_LIBRARY_PATH:-}"
  for d in "${dirs[@]}" ${CUDA_HOME:+"$CUDA_HOME/lib64"} /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu; do
    [ -n "$d" ] || continue
    compgen -G "$d/libnvrtc.so.[0-9]*" > /dev/null && return 0
  done
  return 1
}

install_nvrtc() {
  [ "$(id -u)" = 0 ] || die "no libnvrtc found and not root: install libnvrtc11.2 (Debian non-free) or a CUDA toolkit"
  local sources=/etc/apt/sources.list.d/debian.sources
  [ -f "$sources" ] || die "no libnvrtc found and no $sources to enable Debian's non-free component in"
  if ! grep -q '^Components:.*non-free' "$sources"; then
    [ -f /etc/apt/debian.sources.bak-nvrtc ] || cp "$sources" /etc/apt/debian.sources.bak-nvrtc
    sed -i 's/^Components: main$/Components: main non-free non-free-firmware/' "$sources"
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends libnvrtc11.2
}

have_nvrtc || install_nvrtc
have_nvrtc || die "libnvrtc11.2 was installed but no libnvrtc.so.N is in /usr/lib/x86_64-linux-gnu"

cd "$root"
./mvnw -B -q -pl fleet-gpu -am test -Dtest=KernelModulesCompileWithNvrtcTest -Dsurefire.failIfNoSpecifiedTests=false
report=fleet-gpu/target/surefire-reports/org.fleet4j.gpu.KernelModulesCompileWithNvrtcTest.txt
cat "$report"
grep -q "Skipped: 0" "$report" || die "the check was skipped: no libnvrtc was found by the test"
