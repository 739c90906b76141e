#!/usr/bin/env bash
# The README's test command: installs the system packages the tests need (scripts/install-deps.sh: OpenBLAS,
# iproute2, a font, PyTorch; apt-get as root) and runs every test, unit and end-to-end (./mvnw -B verify), on a fresh
# clone or an existing build. Extra arguments go to Maven (e.g. -pl fleet-core).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
exec ./mvnw -B verify "$@"
