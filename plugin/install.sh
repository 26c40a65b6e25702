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
# The build: compiled with mypyc when a C compiler (${CC:-cc}) and the Python
# headers are there (docs/compiled.md), pure Python otherwise or when compiling
# fails; one line says which.
#
# Environment:
#   PROXY_POSTRENDER_PYTHON   interpreter to build the venv with (default python3)
#   PROXY_POSTRENDER_COMPILE  0: pure Python without trying; 1: compiled or fail;
#                             unset: compiled when possible
#   PROXY_POSTRENDER_WHEEL    a wheel file to install instead of building from the
#                             plugin's source, e.g. the compiled manylinux wheel that
#                             `make dist COMPILE=1` makes (no compiler needed here);
#                             its build is the one said
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
(cd "$plugin_dir" && tar -cf - --exclude='__pycache__' --exclude='*.so' --exclude='*.pyd' \
    pyproject.toml hatch_build.py README.md proxy_postrender) |
    (cd "$src" && tar -xf -) ||
    die "could not copy $plugin_dir to $src"

# Why the build cannot be compiled here, or nothing when it can.
no_compile_reason() {
    compiler=${CC:-cc}
    command -v "${compiler%% *}" >/dev/null 2>&1 || {
        echo "no C compiler ('${compiler%% *}' not found)"
        return
    }
    "$venv/bin/python" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ||
        echo "no Python headers (Python.h; on Debian/Ubuntu: the python3-dev package)"
}

pip_install() {  # the pure build and the dependencies (replacing a compiled build)
    PROXY_POSTRENDER_COMPILE=0 "$venv/bin/python" -m pip install --disable-pip-version-check \
        --no-input --quiet --upgrade --force-reinstall --no-deps "$src" &&
        PROXY_POSTRENDER_COMPILE=0 "$venv/bin/python" -m pip install \
            --disable-pip-version-check --no-input --quiet "$src" ||
        die "pip install failed; fix the cause above and re-run: sh \"$plugin_dir/plugin/install.sh\""
}

# A given wheel: installed as it is, nothing is built (the dependencies as for a source
# install). Which build it holds is what the installed command says.
install_wheel() {
    wheel=$1
    [ -f "$wheel" ] || die "PROXY_POSTRENDER_WHEEL=$wheel is not a file"
    say "installing $wheel into $venv (pip downloads the dependencies)"
    "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
        --upgrade --force-reinstall --no-deps "$wheel" &&
        "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
            "$wheel" ||
        die "pip install of $wheel failed; fix the cause above and re-run: sh \"$plugin_dir/plugin/install.sh\""
    version=$("$venv/bin/proxy-postrender" --version) ||
        die "the installed proxy-postrender does not run: $venv/bin/proxy-postrender --version"
    case $version in
    *"(compiled with mypyc)") build="compiled with mypyc" ;;
    *) build="pure Python (the wheel's build)" ;;
    esac
    say "build: $build"
    say "ready: $venv/bin/proxy-postrender"
    exit 0
}
if [ -n "${PROXY_POSTRENDER_WHEEL:-}" ]; then
    install_wheel "$PROXY_POSTRENDER_WHEEL"
fi

say "installing proxy-postrender from $plugin_dir into $venv (pip downloads the dependencies)"
case ${PROXY_POSTRENDER_COMPILE:-} in
0) reason="PROXY_POSTRENDER_COMPILE=0" ;;
1) reason= ;;
*) reason=$(no_compile_reason) ;;
esac
pip_install
build="pure Python ($reason)"
if [ -z "$reason" ]; then
    log=$venv/compile.log
    say "compiling with mypyc (a minute or two; output in $log)"
    if PROXY_POSTRENDER_COMPILE=1 "$venv/bin/python" -m pip install --disable-pip-version-check \
        --no-input --force-reinstall --no-deps "$src" >"$log" 2>&1; then
        build="compiled with mypyc"
    elif [ "${PROXY_POSTRENDER_COMPILE:-}" = 1 ]; then
        cat "$log" >&2
        die "compiling failed (PROXY_POSTRENDER_COMPILE=1); the output is above and in $log"
    else
        build="pure Python (compiling failed: see $log)"
    fi
fi
say "build: $build"
say "ready: $venv/bin/proxy-postrender"
