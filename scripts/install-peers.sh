#!/usr/bin/env bash
# Installs the peers that docs/performance/collectives.md compares Fleet4J's collectives with, on Debian:
# Open MPI 4.1 (mpicc, mpirun) and PyTorch with Gloo. Not needed to build or test Fleet4J.
set -euo pipefail
need=()
for p in openmpi-bin libopenmpi-dev python3-torch build-essential; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-peers: missing ${need[*]}; run as root or: sudo apt-get install ${need[*]}" >&2
    exit 1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi
echo "install-peers: $(mpirun --version 2>/dev/null | head -1); torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)')"
