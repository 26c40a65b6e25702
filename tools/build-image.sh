#!/usr/bin/env bash
# `make image`: the OCI image of proxy-postrender, built without any container registry,
# in two layers:
# 1. the base: a Debian 12 tree from Debian's packages (mmdebstrap, variant essential,
#    plus python3), imported with `podman import` as localhost/proxy-postrender-base:TAG,
#    TAG a hash of what mmdebstrap is told; built only when podman has no such image;
# 2. the project: a container of the base, no network, installs the pure wheel and its
#    dependencies' wheels (from PyPI, downloaded here), Helm 3, the Argo CD plugin file
#    and its user (tools/image-rootfs.sh), committed as REF (`podman commit`); done again
#    only when one of those inputs changed (a label holds their hash).
# Prints the image reference on stdout, everything else on stderr.
#   build-image.sh REF WHEEL HELM PYTHON
# REF: e.g. localhost/proxy-postrender:0.1.0; WHEEL: dist/'s pure wheel; HELM: the Helm 3
# binary; PYTHON: the Python whose pip downloads the wheels and whose installed versions
# of the dependencies the image gets (the versions the test suite runs with).
# Caches under .cache/image (or IMAGE_CACHE): Debian's .debs, the wheels per set of versions.
set -euo pipefail
ref=$1 wheel=$2 helm=$3 python=$4
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
cache="${IMAGE_CACHE:-$repo/.cache/image}"
plugin="$repo/deploy/argocd/plugin.yaml"
version="${ref##*:}"
case "$(basename "$wheel")" in
    "proxy_postrender-$version-py3-none-any.whl") ;;
    *) echo "build-image: $wheel is not the pure wheel of version $version" >&2; exit 2 ;;
esac
mkdir -p "$cache"
start=$SECONDS
hash() { sha256sum | cut -c1-16; }

# --- the base --------------------------------------------------------------------------
suite=bookworm
mirrors=(
    "deb http://deb.debian.org/debian $suite main"
    "deb http://deb.debian.org/debian $suite-updates main"
    "deb http://deb.debian.org/debian-security $suite-security main"
)
# --variant=essential: Debian's Essential packages only (no apt), plus python3 and what it
# depends on; the merged-usr hook instead of the usrmerge package (which brings perl);
# no manuals, translations or documentation but the copyright files
mm_opts=(
    --variant=essential --include=python3
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
    --aptopt='APT::Install-Recommends "false"'
    --dpkgopt=force-unsafe-io
    --dpkgopt='path-exclude=/usr/share/man/*'
    --dpkgopt='path-exclude=/usr/share/locale/*'
    --dpkgopt='path-exclude=/usr/share/info/*'
    --dpkgopt='path-exclude=/usr/share/doc/*'
    --dpkgopt='path-include=/usr/share/doc/*/copyright'
    --customize-hook='rm -rf "$1"/var/cache/* "$1"/var/log/* "$1"/var/lib/apt/lists/*'
)
# the ISO week in the tag: a base is rebuilt at least once a week, so Debian's security
# updates reach the image
base="localhost/proxy-postrender-base:$suite-$(printf '%s\n' "${mm_opts[@]}" "$suite" "${mirrors[@]}" "$(date -u +%G-W%V)" | hash)"
if ! podman image exists "$base"; then
    work="$(mktemp -d "$cache/base.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$cache/debs"
    # Debian's .debs are kept in $cache/debs (--skip=download/empty, essential/unlink and
    # the sync hooks, as mmdebstrap(1) shows): a second build downloads only the lists
    mmdebstrap --verbose --skip=download/empty --skip=essential/unlink \
        --setup-hook='mkdir -p "$1"/var/cache/apt/archives' \
        --setup-hook="sync-in $cache/debs /var/cache/apt/archives" \
        --customize-hook="sync-out /var/cache/apt/archives $cache/debs" \
        "${mm_opts[@]}" \
        "$suite" "$work/rootfs.tar" "${mirrors[@]}" >"$work/mmdebstrap.log" 2>&1 ||
        { cat "$work/mmdebstrap.log" >&2; echo "build-image: mmdebstrap failed" >&2; exit 1; }
    podman import --quiet --message "Debian $suite with python3 (mmdebstrap)" \
        "$work/rootfs.tar" "$base" >/dev/null
    rm -rf "$work"
    trap - EXIT
    echo "build-image: $base in $((SECONDS - start)) s" >&2
    # the bases of earlier builds (an image still built on one stays)
    podman images --format '{{.Repository}}:{{.Tag}}' localhost/proxy-postrender-base |
        grep -vxF "$base" | xargs -r podman image rm >/dev/null 2>&1 || true
fi

# --- the project -----------------------------------------------------------------------
# the dependencies at the versions $python has (pip too: it installs them in the image)
pins=$("$python" - "$repo/pyproject.toml" <<'EOF'
import re, sys, tomllib
from importlib.metadata import version
with open(sys.argv[1], "rb") as f:
    deps = tomllib.load(f)["project"]["dependencies"]
names = [re.match(r"[A-Za-z0-9._-]+", d).group(0) for d in deps] + ["pip"]
print("\n".join(f"{n}=={version(n)}" for n in names))
EOF
)
wheels="$cache/wheels-$(hash <<<"$pins")"
if [ ! -f "$wheels/.complete" ]; then
    echo "build-image: downloading the wheels ($(tr '\n' ' ' <<<"$pins"))" >&2
    rm -rf "$wheels"
    # CPython 3.11 (Debian 12's) on glibc 2.36 (a manylinux tag of glibc 2.17 to 2.36),
    # this machine's architecture
    platforms=()
    for minor in $(seq 36 -1 17); do platforms+=(--platform "manylinux_2_${minor}_$(uname -m)"); done
    # shellcheck disable=SC2086
    "$python" -m pip download --quiet --disable-pip-version-check --dest "$wheels" \
        --only-binary=:all: --implementation cp --python-version 3.11 --abi cp311 \
        "${platforms[@]}" --platform "manylinux2014_$(uname -m)" $pins
    touch "$wheels/.complete"
fi

inputs=$(cat "$wheel" "$helm" "$plugin" "$here/build-image.sh" "$here/image-rootfs.sh" \
    <(printf '%s\n' "$base" "$(podman image inspect --format '{{.Id}}' "$base")" "$pins") | hash)
have=$(podman image inspect --format '{{index .Labels "io.proxy-postrender.inputs"}}' \
    "$ref" 2>/dev/null || true)
if [ "$have" = "$inputs" ]; then
    echo "build-image: $ref is up to date" >&2
    echo "$ref"
    exit 0
fi

old=$(podman image inspect --format '{{.Id}}' "$ref" 2>/dev/null || true)
container="proxy-postrender-build-$$"
trap 'podman rm --force "$container" >/dev/null 2>&1 || true' EXIT
podman run --name "$container" --network=none --user 0:0 --entrypoint '' \
    --volume "$here/image-rootfs.sh:/build/image-rootfs.sh:ro" \
    --volume "$wheel:/build/$(basename "$wheel"):ro" \
    --volume "$wheels:/build/wheels:ro" \
    --volume "$helm:/build/helm:ro" \
    --volume "$plugin:/build/plugin.yaml:ro" \
    "$base" bash /build/image-rootfs.sh "/build/$(basename "$wheel")" /build/wheels \
    /build/helm /build/plugin.yaml >&2
# nobody (65534), as the KRM function specification runs a function; Argo CD's sidecar
# patch runs it as 999 (deploy/argocd/sidecar-patch.yaml)
podman commit --quiet \
    --change 'USER=65534:65534' \
    --change 'WORKDIR=/' \
    --change 'ENV=PATH=/usr/local/bin:/usr/bin:/bin' \
    --change 'ENTRYPOINT=["/usr/local/bin/proxy-postrender"]' \
    --change 'CMD=[]' \
    --change "LABEL=io.proxy-postrender.inputs=$inputs" \
    --change "LABEL=org.opencontainers.image.version=$version" \
    --change 'LABEL=org.opencontainers.image.licenses=Apache-2.0' \
    "$container" "$ref" >/dev/null
new=$(podman image inspect --format '{{.Id}}' "$ref")
if [ -n "$old" ] && [ "$old" != "$new" ]; then
    # not --force: an image a container still runs stays
    podman image rm "$old" >/dev/null 2>&1 || true
fi
echo "build-image: $ref ($(podman image inspect --format '{{.Size}}' "$ref") bytes)" \
    "in $((SECONDS - start)) s" >&2
echo "$ref"
