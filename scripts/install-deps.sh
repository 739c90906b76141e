#!/usr/bin/env bash
# Installs the system packages Fleet4J uses on Debian: OpenBLAS (fast CPU matrix products through FFM),
# iproute2 (network namespaces for multi-host tests), a font (fontconfig and fonts-dejavu-core: the labels of the
# charts; without one they are written unlabelled, LossCurveTest checks both), PyTorch (python3-torch:
# TorchInteropTest checks weights against a real PyTorch run), Slurm and munge (slurm-wlm, munge: SlurmClusterIT runs
# a one-node Slurm) and the tools that make the container image without a Docker daemon (debootstrap, umoci, skopeo:
# scripts/image/base.sh). Peers for benchmarks are in scripts/install-peers.sh.
set -euo pipefail
need=()
lean=()
for p in libopenblas0-pthread iproute2 fontconfig fonts-dejavu-core python3-torch; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
# Slurm's and the image tools' recommendations (documentation, a mail server) are not needed
for p in slurm-wlm munge debootstrap umoci skopeo; do
  dpkg -s "$p" >/dev/null 2>&1 || lean+=("$p")
done
if [ ${#need[@]} -gt 0 ] || [ ${#lean[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing ${need[*]} ${lean[*]}; run as root or: sudo apt-get install ${need[*]} ${lean[*]}" >&2
    exit 1
  fi
  apt-get update -q
  if [ ${#need[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
  fi
  if [ ${#lean[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${lean[@]}"
  fi
fi
