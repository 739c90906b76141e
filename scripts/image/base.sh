#!/usr/bin/env bash
# Makes what the Fleet4J container image is built on, without a Docker daemon (docs/CLUSTERS.md, "Container image"):
#   OUT/base.tar  a Debian bookworm root file system (debootstrap, minbase, with OpenBLAS and a font), packed as an OCI
#                 image by umoci and saved in Docker's archive format by skopeo: the base jib:buildTar builds on
#                 (./mvnw -Pimage package, profile of the examples module);
#   OUT/jdk       a JDK 25 runtime of the modules Fleet4J uses, made by jlink from the build's JDK.
# Usage: scripts/image/base.sh [OUT]   (default build/image). Both are kept and reused while this script and its
# package list are unchanged. Where they cannot be made (not root, or debootstrap, umoci, skopeo or jlink missing, or no
# Debian mirror reachable) it writes the reason to OUT/SKIPPED and exits 0, so the tests that need the image skip
# saying why. The Debian mirror is the first one apt is configured with (FLEET4J_DEBIAN_MIRROR overrides it).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$(mkdir -p "${1:-$ROOT/build/image}" && cd "${1:-$ROOT/build/image}" && pwd)"
PACKAGES=libopenblas0-pthread,fontconfig,fonts-dejavu-core
MODULES=java.base,java.compiler,java.datatransfer,java.desktop,java.instrument,java.logging,java.management,java.naming,java.net.http,java.prefs,java.scripting,java.security.jgss,java.sql,java.xml,jdk.crypto.ec,jdk.httpserver,jdk.incubator.vector,jdk.jfr,jdk.management,jdk.unsupported,jdk.zipfs
rm -f "$OUT/SKIPPED"

skip() {
  echo "image: $*" | tee "$OUT/SKIPPED" >&2
  exit 0
}

# debootstrap mounts /proc and /sys in the new root while it installs; one it left mounted is unmounted before the
# root is removed, so that rm never walks into this machine's own /proc or /sys
unmount_under() {
  { findmnt -rno TARGET || true; } | { grep "^$1/" || true; } | sort -r | while read -r m; do umount -l "$m" || true; done
}

[ "$(id -u)" = 0 ] || skip "debootstrap needs root to make the base image's root file system; the image is not built"
for tool in debootstrap umoci skopeo; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (apt-get install debootstrap umoci skopeo, scripts/install-deps.sh); the image is not built"
done
JAVA="$(FLEETRUN_PRINT_JAVA=1 "$ROOT/bin/fleetrun" 2>/dev/null)" || skip "no JDK 25 found for jlink; the image is not built"
JLINK="$(dirname "$JAVA")/jlink"
[ -x "$JLINK" ] || skip "$JLINK is missing (a JDK, not a JRE, is needed for jlink); the image is not built"

KEY="$(sha256sum < "${BASH_SOURCE[0]}" | cut -c1-16)-$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$(dirname "$(dirname "$JAVA")")/release")"
if [ -f "$OUT/base.tar" ] && [ -d "$OUT/jdk" ] && [ "$(cat "$OUT/base.key" 2>/dev/null)" = "$KEY" ]; then
  echo "image: $OUT/base.tar and $OUT/jdk are up to date"
  exit 0
fi
unmount_under "$OUT"
rm -rf "$OUT/oci" "$OUT/bundle" "$OUT/jdk" "$OUT/base.tar" "$OUT/base.key"

MIRROR="${FLEET4J_DEBIAN_MIRROR:-$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -v -- -security | head -1 || true)}"
start=$(date +%s)
umoci init --layout "$OUT/oci"
umoci new --image "$OUT/oci:base"
umoci unpack --image "$OUT/oci:base" "$OUT/bundle" >/dev/null
if ! debootstrap --variant=minbase --include="$PACKAGES" bookworm "$OUT/bundle/rootfs" ${MIRROR:+"$MIRROR"} \
    > "$OUT/debootstrap.log" 2>&1; then
  tail -5 "$OUT/debootstrap.log" >&2
  unmount_under "$OUT"
  rm -rf "$OUT/oci" "$OUT/bundle"
  skip "debootstrap of Debian bookworm failed (see $OUT/debootstrap.log; is a Debian mirror reachable?); the image is not built"
fi
unmount_under "$OUT"
# what a container runtime provides (device nodes, apt's caches) stays out of the image
rm -rf "$OUT/bundle/rootfs/dev/"* "$OUT/bundle/rootfs/var/cache/apt/archives/"*.deb "$OUT/bundle/rootfs/var/lib/apt/lists/"*
umoci repack --image "$OUT/oci:base" "$OUT/bundle"
umoci config --image "$OUT/oci:base" --config.env "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
skopeo --insecure-policy copy --quiet "oci:$OUT/oci:base" "docker-archive:$OUT/base.tar:fleet4j-base:bookworm"
rm -rf "$OUT/oci" "$OUT/bundle"
"$JLINK" --add-modules "$MODULES" --strip-debug --no-header-files --no-man-pages --output "$OUT/jdk" 2>&1 \
  | grep -v "incubator modules" || true
[ -x "$OUT/jdk/bin/java" ] || skip "jlink made no runtime in $OUT/jdk; the image is not built"
echo "$KEY" > "$OUT/base.key"
echo "image: made $OUT/base.tar ($(du -h "$OUT/base.tar" | cut -f1)) and $OUT/jdk ($(du -sh "$OUT/jdk" | cut -f1)) in $(( $(date +%s) - start )) s"
