#!/usr/bin/env bash
# Build the gpu-gitops image with buildah from the Containerfile at the repository root.
#
#   image/build.sh [--offline] [--tag NAME] [--ca-bundle FILE]
#
# --offline: no container registry is reachable, so the base is assembled here instead of
#   pulled: `debootstrap --variant=minbase` of Debian bookworm (python3, python3-venv,
#   ca-certificates) from Debian's archive, committed as localhost/gpu-gitops-base:bookworm, then
#   the same Containerfile runs on it (the Python dependencies still come from PyPI).
# --ca-bundle FILE: a CA bundle pip must trust to reach PyPI (a TLS-intercepting proxy); mounted
#   into the build stage only.
# Storage and isolation default to what works as root without a daemon or overlayfs: vfs and
# chroot (override with STORAGE_DRIVER / BUILDAH_ISOLATION).
set -euo pipefail
cd "$(dirname "$0")/.."

offline=0
tag=""
ca_bundle=""
while [ $# -gt 0 ]; do
  case "$1" in
    --offline) offline=1 ;;
    --tag) tag="$2"; shift ;;
    --ca-bundle) ca_bundle="$2"; shift ;;
    *) echo "usage: image/build.sh [--offline] [--tag NAME] [--ca-bundle FILE]" >&2; exit 2 ;;
  esac
  shift
done

version="$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)"
tag="${tag:-localhost/gpu-gitops:${version}}"
export STORAGE_DRIVER="${STORAGE_DRIVER:-vfs}"
export BUILDAH_ISOLATION="${BUILDAH_ISOLATION:-chroot}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

args=(--build-arg "VERSION=${version}" --layers=false)
if [ "$offline" = 1 ]; then
  base="localhost/gpu-gitops-base:bookworm"
  if ! buildah inspect --type image "$base" >/dev/null 2>&1; then
    rootfs="$(mktemp -d)"
    trap 'rm -rf "$rootfs"' EXIT
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
      bookworm "$rootfs" "$mirror"
    # runtime only: no package caches, documentation, manuals or locales in the image
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
      "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
      "$rootfs"/usr/share/locale/*
    container="$(buildah from scratch)"
    buildah add --quiet "$container" "$rootfs" /
    buildah config --env PATH=/usr/local/bin:/usr/bin:/bin "$container"
    buildah commit --quiet --rm "$container" "$base" >/dev/null
  fi
  args+=(--build-arg "BASE=${base}")
fi
if [ -n "$ca_bundle" ]; then
  args+=(--volume "$(realpath "$ca_bundle"):/run/build-ca.crt:ro" \
         --build-arg PIP_CA_BUNDLE=/run/build-ca.crt)
fi
buildah bud "${args[@]}" -f Containerfile -t "$tag" .
echo "built $tag"
