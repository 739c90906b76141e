#!/usr/bin/env bash
# The job token every pod of a Fleet4J job shares (docs/LAUNCHER.md, "Security"): a Kubernetes Secret that the
# manifests here read, as FLEET_JOB_TOKEN (secretKeyRef) or as a file (FLEET_JOB_TOKEN_FILE, a Secret volume of mode
# 0400). Make one per job, in the job's namespace.
set -euo pipefail
kubectl create secret generic "${1:-fleet4j-job-token}" --from-literal=token="$(head -c 32 /dev/urandom | base64)"
