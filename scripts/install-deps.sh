#!/usr/bin/env bash
# Installs the system packages Fleet4J uses on Debian: OpenBLAS (fast CPU matrix products through FFM),
# iproute2 (network namespaces for multi-host tests), a font (fontconfig and fonts-dejavu-core: the labels of the
# charts; without one they are written unlabelled, LossCurveTest checks both) and PyTorch (python3-torch:
# TorchInteropTest checks weights against a real PyTorch run). Peers for benchmarks are in scripts/install-peers.sh.
set -euo pipefail
need=()
for p in libopenblas0-pthread iproute2 fontconfig fonts-dejavu-core python3-torch; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing ${need[*]}; run as root or: sudo apt-get install ${need[*]}" >&2
    exit 1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi
