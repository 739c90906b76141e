#!/usr/bin/env bash
# Compile-checks every CUDA C kernel module of fleet-gpu with NVRTC, without a GPU: NVRTC compiles to a cubin for a
# named architecture (sm_80 and sm_90; sm_100 too with NVRTC 12.8 on) with the options NvrtcCompiler uses at run time,
# and needs no driver.
#
#   scripts/nvrtc-check.sh            # with the libnvrtc found, else Debian's (CUDA 11.8)
#   scripts/nvrtc-check.sh --cuda13   # with CUDA 13.1's NVRTC, the one fleet-gpu binds at run time, also through
#                                     # JavaCPP's binding (NvrtcCompiler itself)
#
# Default: finds a libnvrtc.so.N ($LD_LIBRARY_PATH, $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/lib/x86_64-linux-gnu);
# where there is none, on Debian 12 as root, it enables the non-free component (the original sources file is kept as
# /etc/apt/debian.sources.bak-nvrtc) and installs libnvrtc11.2 (CUDA 11.8's NVRTC, 16 MB; it knows sm_90). The kernels
# include no CUDA headers, so no -dev package is needed.
# --cuda13: takes libnvrtc.so.13, its builtins and libcudart.so.13 out of JavaCPP's cuda-redist jar for linux-x86_64
# from Maven Central (the version fleet-gpu's pom names; a 380 MB download, once) into ~/.cache/fleet4j/nvrtc-<version>/,
# with a no-device stand-in for the driver built there by gcc (see use_cuda13_nvrtc).
# Either way it then runs fleet-gpu's KernelModulesCompileWithNvrtcTest, whose FFM driver calls nvrtcCreateProgram /
# nvrtcCompileProgram / nvrtcGetProgramLog on each module and checks that the cubin holds every entry point, and (where
# JavaCPP's binding links) compiles them again with NvrtcCompiler. Exit 0: every module compiled.
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

# CUDA 13's NVRTC and runtime from the cuda-redist jar of the presets version in the parent pom.xml, and a stand-in for
# the driver (libcuda.so.1) that answers every call with CUDA_ERROR_NO_DEVICE: JavaCPP's bindings link the driver, so
# with it NvrtcCompiler (the production path) loads and compiles too; NVRTC itself never calls the driver. Puts the
# directory first in LD_LIBRARY_PATH, where the test looks first. Only this check runs with it: tests of the no-driver
# messages would see a driver.
use_cuda13_nvrtc() {
  command -v unzip > /dev/null || die "--cuda13 needs unzip (apt-get install unzip)"
  local pom="$root/pom.xml" javacpp presets
  javacpp="$(sed -n 's:.*<javacpp.version>\(.*\)</javacpp.version>.*:\1:p' "$pom")"
  presets="$(sed -n 's:.*<cuda.presets.version>\(.*\)</cuda.presets.version>.*:\1:p' "$pom" | sed "s/\${javacpp.version}/$javacpp/")"
  [ -n "$presets" ] || die "no cuda.presets.version in $pom"
  local dir="${XDG_CACHE_HOME:-$HOME/.cache}/fleet4j/nvrtc-$presets"
  local lib=org/bytedeco/cuda/linux-x86_64
  if ! compgen -G "$dir/libnvrtc-builtins.so.*" > /dev/null || [ ! -f "$dir/libnvrtc.so.13" ] || [ ! -f "$dir/libcudart.so.13" ]; then
    local tmp
    tmp="$(mktemp -d)"
    (cd "$root" && ./mvnw -B -q dependency:copy -Dartifact="org.bytedeco:cuda-redist:$presets:jar:linux-x86_64" \
      -DoutputDirectory="$tmp")
    mkdir -p "$dir"
    unzip -o -j -q "$tmp"/cuda-redist-*.jar "$lib/libnvrtc.so.*" "$lib/libnvrtc-builtins.so.*" "$lib/libcudart.so.*" -d "$dir"
    rm -rf "$tmp"
  fi
  if [ ! -f "$dir/libcuda.so.1" ]; then
    if command -v gcc > /dev/null && command -v nm > /dev/null; then
      local tmp
      tmp="$(mktemp -d)"
      (cd "$root" && ./mvnw -B -q dependency:copy -Dartifact="org.bytedeco:cuda:$presets:jar:linux-x86_64" \
        -DoutputDirectory="$tmp")
      unzip -o -j -q "$tmp"/cuda-*.jar "$lib/libjnicudart.so" -d "$tmp"
      {
        echo "/* no-device stand-in for libcuda.so.1: every driver call JavaCPP's cudart binding links returns 100 */"
        nm -D --undefined-only "$tmp/libjnicudart.so" | awk '$2 ~ /^cu[A-Z]/ {print "int " $2 "(void) { return 100; }"}' | sort -u
      } > "$tmp/cuda_stub.c"
      gcc -shared -fPIC -o "$dir/libcuda.so.1" "$tmp/cuda_stub.c"
      rm -rf "$tmp"
    else
      echo "nvrtc-check: no gcc/nm: JavaCPP's binding will not link, so only the FFM check runs" >&2
    fi
  fi
  export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

case "${1:-}" in
  --cuda13) use_cuda13_nvrtc ;;
  "") have_nvrtc || install_nvrtc
      have_nvrtc || die "libnvrtc11.2 was installed but no libnvrtc.so.N is in /usr/lib/x86_64-linux-gnu" ;;
  *) die "usage: scripts/nvrtc-check.sh [--cuda13]" ;;
esac

cd "$root"
./mvnw -B -q -pl fleet-gpu -am test -Dtest=KernelModulesCompileWithNvrtcTest -Dsurefire.failIfNoSpecifiedTests=false
report=fleet-gpu/target/surefire-reports/org.fleet4j.gpu.KernelModulesCompileWithNvrtcTest.txt
grep -h "compiled" fleet-gpu/target/surefire-reports/org.fleet4j.gpu.KernelModulesCompileWithNvrtcTest-output.txt || true
cat "$report"
grep -q "Tests run: [1-9]" "$report" || die "no test ran"
grep -q "Failures: 0, Errors: 0" "$report" || die "a kernel module failed to compile"
grep -q "compiled with" fleet-gpu/target/surefire-reports/org.fleet4j.gpu.KernelModulesCompileWithNvrtcTest-output.txt \
  || die "the check was skipped: no libnvrtc was found by the test"
