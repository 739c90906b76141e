#!/usr/bin/env bash
# The README's test command: installs the system packages the tests need (scripts/install-deps.sh: OpenBLAS,
# iproute2, a font, PyTorch, Slurm and munge, the image tools; apt-get as root), makes the container image's base
# (scripts/image/base.sh: a Debian root file system and a jlink'd JDK; it says why and goes on where it cannot), and
# runs every test, unit and end-to-end (./mvnw -B verify, with the image profile when the base is there, so that
# ContainerImageIT tests the image), on a fresh clone or an existing build. Extra arguments go to Maven (e.g. -pl fleet-core).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/image/base.sh
profiles=()
if [ -f build/image/base.tar ]; then
  profiles=(-Pimage)
fi
exec ./mvnw -B verify "${profiles[@]}" "$@"
