#!/usr/bin/env bash
# Prepares a Debian host (root) for the image test (tests/image-podman.test.ts):
# podman from Debian's packages, runc (not crun), debootstrap for the base image,
# and containers.conf for a host without bridge networking: host network for
# every container and build step, cgroupfs, nofile 20000, and an nproc limit
# below the host's (runc may lower limits here, not raise them).
set -euo pipefail
cd "$(dirname "$0")"

log() { printf '[podman-host] %s\n' "$*" >&2; }

missing=()
for tool in podman runc debootstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing podman, runc, debootstrap (missing: ${missing[*]})"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    podman runc debootstrap containernetworking-plugins fuse-overlayfs uidmap iptables >/dev/null
fi

hard_nproc="$(ulimit -Hu)"
nproc=16384
if [ "$hard_nproc" != unlimited ] && [ "$hard_nproc" -le "$nproc" ]; then nproc=$((hard_nproc / 2)); fi
mkdir -p /etc/containers
sed "s/^default_ulimits = .*/default_ulimits = [\"nofile=20000:20000\", \"nproc=$nproc:$nproc\"]/" containers.conf >/etc/containers/containers.conf
log "podman $(podman --version | awk '{print $3}'), runc $(runc --version | awk 'NR==1{print $3}'), /etc/containers/containers.conf written"
