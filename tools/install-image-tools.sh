#!/usr/bin/env bash
# What `make image` and its tests (tests/test_image.py) need on the host, and the host's
# workarounds, in one place:
# - podman, runc and mmdebstrap from Debian's packages when missing (as root: the image
#   is built in mmdebstrap's root mode and imported into root's podman storage);
# - a containers.conf drop-in that lowers the containers' open-file and process limits
#   when the host cannot give what podman asks for as root: podman raises both to the
#   kernel's maximum, and a host whose hard limits are lower (a sandbox, a CI runner)
#   refuses every container ("runc create failed: ... error setting rlimit type 7:
#   operation not permitted"). It is only written after such a refusal, checked with a
#   throwaway container (podman run --rootfs on a directory holding the host's
#   /bin/true and its libraries, read-only, no network), so a host where podman works
#   keeps its defaults.
# podman's default storage (overlay) is kept: it works here. Set STORAGE_DRIVER=vfs in
# the environment where overlay does not (podman reads it).
set -euo pipefail

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi

missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
    $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

DROPIN=/etc/containers/containers.conf.d/50-proxy-postrender-ulimits.conf
probe_root="$(mktemp -d)"
trap 'rm -rf "$probe_root"' EXIT
mkdir -p "$probe_root/bin"
cp /bin/true "$probe_root/bin/"
for lib in $(ldd /bin/true | grep -o '/[^ ]*'); do
    mkdir -p "$probe_root$(dirname "$lib")"
    cp -L "$lib" "$probe_root$lib"
done
probe() {
    $sudo podman run --rm --read-only --network=none --rootfs "$probe_root" /bin/true 2>&1
}
if ! out="$(probe)"; then
    if ! grep -q 'error setting rlimit' <<<"$out"; then
        printf 'podman cannot run a container here:\n%s\n' "$out" >&2
        exit 1
    fi
    echo "podman: lowering the containers' nofile/nproc limits ($DROPIN)" >&2
    $sudo mkdir -p "$(dirname "$DROPIN")"
    # 4096 open files and processes: far more than the function needs (one process,
    # a handful of files); values at the host's hard limits are refused as well
    printf '%s\n' '# written by proxy-postrender tools/install-image-tools.sh: podman as root' \
        '# raises these to the kernel maximum, which this host refuses' \
        '[containers]' 'default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]' |
        $sudo tee "$DROPIN" >/dev/null
    if ! out="$(probe)"; then
        printf 'podman still cannot run a container:\n%s\n' "$out" >&2
        exit 1
    fi
fi
