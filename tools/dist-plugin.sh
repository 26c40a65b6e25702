#!/usr/bin/env bash
# The Helm 4 plugin tarball (make dist): `helm plugin package` of a staging directory
# holding only what the plugin needs: plugin.yaml, the install hook and the package
# source it builds from. Not the checkout itself: that would carry .git/, caches and
# venvs, and deploy/argocd/plugin.yaml, which Helm 4 reads and refuses
# (invalid plugin apiVersion "argoproj.io/v1alpha1").
#
# usage: tools/dist-plugin.sh HELM4 OUTDIR
#   SIGN_KEY         name of the key to sign with (a .prov beside the tarball); unset: unsigned
#   KEYRING          the secret keyring helm reads the key from (default ~/.gnupg/secring.gpg;
#                    GnuPG 2 keeps none: `gpg --export-secret-keys NAME > secring.gpg`)
#   PASSPHRASE_FILE  the key's passphrase, when it has one
set -euo pipefail

helm=$1
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

stage=$(mktemp -d "${TMPDIR:-/tmp}/proxy-plugin-stage.XXXXXX")
trap 'rm -rf -- "$stage"' EXIT
plugin=$stage/proxy
mkdir "$plugin"
# what the hook builds from (plugin/install.sh copies the same list) and what the plugin is
(cd "$root" && tar -cf - --exclude='__pycache__' --exclude='*.so' --exclude='*.pyd' \
    plugin.yaml plugin LICENSE README.md pyproject.toml hatch_build.py proxy_postrender) |
    (cd "$plugin" && tar -xf -)

sign=(--sign=false)
if [ -n "${SIGN_KEY:-}" ]; then
    sign=(--sign --key "$SIGN_KEY" --keyring "${KEYRING:-$HOME/.gnupg/secring.gpg}")
    if [ -n "${PASSPHRASE_FILE:-}" ]; then
        sign+=(--passphrase-file "$PASSPHRASE_FILE")
    fi
fi
"$helm" plugin package "$plugin" --destination "$out" "${sign[@]}"
