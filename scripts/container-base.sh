#!/usr/bin/env bash
# Builds the container image's default base, localhost/promptpipe-base:bookworm, without an image registry: Debian
# bookworm from Debian's own packages (`debootstrap --variant=minbase`, what the official debian images start from),
# slimmed like debian:bookworm-slim, then `podman import`. Machines that reach an image registry do not need it: they
# build with `--build-arg BASE_IMAGE=debian:bookworm-slim` (README, "Run it in a container").
#
# Run as root (debootstrap needs it); installs debootstrap, podman and runc with apt-get when one is missing. Does
# nothing when the image exists already, unless called with --rebuild.
set -euo pipefail

IMAGE=localhost/promptpipe-base:bookworm
SUITE=bookworm

if [ "${1:-}" != "--rebuild" ] && command -v podman >/dev/null && podman image exists "$IMAGE"; then
  echo "container-base: $IMAGE exists (--rebuild to build it again)" >&2
  exit 0
fi

missing=()
for tool in debootstrap podman runc; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "container-base: installing ${missing[*]} with apt-get" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

rootfs="$(mktemp -d "${TMPDIR:-/var/tmp}/promptpipe-base.XXXXXX")"
trap 'rm -rf "$rootfs"' EXIT

echo "container-base: debootstrap --variant=minbase $SUITE (about a minute)" >&2
# debootstrap's default mirror: the one every Debian machine reaches.
debootstrap --variant=minbase "$SUITE" "$rootfs" >"$rootfs.log" 2>&1 || {
  tail -20 "$rootfs.log" >&2
  rm -f "$rootfs.log"
  exit 1
}
rm -f "$rootfs.log"

# What debian:bookworm-slim leaves out (documentation, manual pages, translations), also for packages installed later
# in the image, and nothing of the machine it was built on (its resolver and name; the container runtime adds its own).
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$rootfs"/usr/share/{man,groff,info,locale,lintian}/* "$rootfs"/var/cache/apt/archives/*.deb \
  "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/*
rm -f "$rootfs/etc/resolv.conf" "$rootfs/etc/hostname"

tar --numeric-owner -C "$rootfs" -c . | podman import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' - "$IMAGE" >/dev/null
echo "container-base: built $IMAGE ($(podman image inspect --format '{{.Size}}' "$IMAGE") bytes)" >&2
