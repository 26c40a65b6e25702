#!/bin/sh
# Helm 4 plugin hook (install and update): build a private virtualenv at
# $HELM_PLUGIN_DIR/.plugin-venv holding proxy-postrender and its dependencies.
#
# Helm runs this with HELM_PLUGIN_DIR and HELM_PLUGIN_NAME set, in the
# user's working directory, with Helm's own environment (so PIP_INDEX_URL,
# PIP_FIND_LINKS, HTTPS_PROXY and friends are honoured). Its output goes
# straight to the user's terminal. It can also be run by hand to repair a
# plugin whose install hook failed:
#     sh "$(helm env HELM_PLUGINS)/<plugin dir>/plugin/install.sh"
#
# Environment:
#   PROXY_POSTRENDER_PYTHON  interpreter to build the venv with (default python3)
set -eu

event=${1:-install}
if [ -n "${HELM_PLUGIN_DIR:-}" ]; then
    plugin_dir=$HELM_PLUGIN_DIR
else
    plugin_dir=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
fi
venv=$plugin_dir/.plugin-venv
marker=$venv/.proxy-postrender-plugin
python=${PROXY_POSTRENDER_PYTHON:-python3}

say() { printf 'proxy plugin (%s): %s\n' "$event" "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ -f "$plugin_dir/pyproject.toml" ] ||
    die "$plugin_dir has no pyproject.toml; is HELM_PLUGIN_DIR the plugin directory?"

command -v "$python" >/dev/null 2>&1 ||
    die "'$python' not found on PATH; install Python >= 3.11 or set PROXY_POSTRENDER_PYTHON"
if ! py_version=$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3]); sys.exit(sys.version_info < (3, 11))' 2>/dev/null); then
    die "Python >= 3.11 is required; '$python' ${py_version:+is $py_version}${py_version:-does not run}. Set PROXY_POSTRENDER_PYTHON."
fi

# Never take over a virtualenv this hook did not create.
if [ -e "$venv" ] && [ ! -e "$marker" ]; then
    die "$venv exists but was not created by this hook. Remove it and re-run this script."
fi

venv_ok() {
    [ -x "$venv/bin/python" ] &&
        "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null &&
        "$venv/bin/python" -m pip --version >/dev/null 2>&1
}

if ! venv_ok; then
    say "creating virtualenv $venv with Python $py_version ($python)"
    if ! "$python" -m venv --clear "$venv"; then
        # Mark even a half-built venv as ours so that a re-run may replace it.
        if [ -d "$venv" ]; then : >"$marker"; fi
        die "'$python -m venv' failed (on Debian/Ubuntu install the python3-venv package)"
    fi
    : >"$marker"
    venv_ok || die "the new virtualenv at $venv has no working pip"
fi

# Build from a scratch copy: pip builds in-tree, and setuptools would leave
# build/ and *.egg-info in the plugin directory (which is the user's checkout
# when the plugin was installed from a local directory: Helm symlinks it),
# and a stale build/ can carry deleted modules into the next update.
src=$(mktemp -d "${TMPDIR:-/tmp}/proxy-postrender-src.XXXXXX")
trap 'rm -rf -- "$src"' EXIT
# Only what the package build reads: a checkout also holds caches and venvs.
(cd "$plugin_dir" && tar -cf - --exclude='__pycache__' pyproject.toml README.md proxy_postrender) |
    (cd "$src" && tar -xf -) ||
    die "could not copy $plugin_dir to $src"

say "installing proxy-postrender from $plugin_dir into $venv (pip downloads the dependencies)"
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    --upgrade "$src" ||
    die "pip install failed; fix the cause above and re-run: sh \"$plugin_dir/plugin/install.sh\""

[ -x "$venv/bin/proxy-postrender" ] ||
    die "pip finished but $venv/bin/proxy-postrender is missing"

say "ready: $venv/bin/proxy-postrender"
