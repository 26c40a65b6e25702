#!/usr/bin/env bash
# The project's layer of `make image`, run by tools/build-image.sh as root in a container
# of the Debian base (no network; the inputs mounted read-only): proxy-postrender and its
# dependencies from wheels (no index), Helm for the Argo CD plugin, the plugin file where
# Argo CD's CMP server reads it, and the sidecar's user (uid 999, Argo CD's).
#   image-rootfs.sh WHEEL WHEELS HELM PLUGIN_YAML
set -euo pipefail
wheel=$1 wheels=$2 helm=$3 plugin=$4

# pip runs from its own wheel (a zip), so nothing of it stays in the image; env -i and
# --isolated: no pip setting of any kind. The image has no Debian Python library for pip
# to break (python3 and its standard library only): hence --break-system-packages.
pip_wheel=$(ls "$wheels"/pip-*.whl)
env -i PATH=/usr/local/bin:/usr/bin:/bin python3 "$pip_wheel/pip" install --isolated \
    --quiet --no-index --find-links "$wheels" --no-cache-dir --root-user-action=ignore \
    --break-system-packages "$wheel"
proxy-postrender --version

# Helm 3 for the Argo CD plugin's `helm template` (the KRM function does not use it)
install -m 0755 "$helm" /usr/local/bin/helm

# Argo CD's repo-server runs its sidecars as uid 999 (user argocd); the CMP server reads
# the plugin from this path
if ! grep -q '^argocd:' /etc/passwd; then
    echo 'argocd:x:999:999:Argo CD:/home/argocd:/usr/sbin/nologin' >>/etc/passwd
    echo 'argocd:x:999:' >>/etc/group
fi
install -d -o 999 -g 999 /home/argocd /home/argocd/cmp-server /home/argocd/cmp-server/plugins
install -d /home/argocd/cmp-server/config
install -m 0644 "$plugin" /home/argocd/cmp-server/config/plugin.yaml

rm -rf /tmp/* /var/tmp/* /root/.cache
