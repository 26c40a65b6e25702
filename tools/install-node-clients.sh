#!/usr/bin/env bash
# The two NO_PROXY implementations Node.js programs use, from the npm registry,
# for tests/test_client_programs.py (run there with the machine's node):
#   undici          EnvHttpProxyAgent (fetch, Node's built-in env proxy support)
#   proxy-from-env  getProxyForUrl (axios and many CLIs)
#
#   tools/install-node-clients.sh DEST_DIR   ->  DEST_DIR/node_modules/{undici,proxy-from-env}
#
# Idempotent: nothing is fetched when the pinned versions are already in place.
# node and npm are required: a machine without them fails here, it is not skipped.
set -euo pipefail

die() {
    printf 'install-node-clients: error: %s\n' "$*" >&2
    exit 1
}

[[ $# -eq 1 && -n $1 ]] || die "usage: $0 DEST_DIR"
dest_dir=$1
for tool in node npm; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is required but not on PATH"
done

# package@version pins; docs/noproxy.md cites the same versions
pins=(undici@7.30.2 proxy-from-env@2.1.0)

installed() {
    local name=${1%@*} version=${1##*@}
    local manifest=$dest_dir/node_modules/$name/package.json
    [[ -f $manifest ]] || return 1
    [[ $(node -p "JSON.parse(require('fs').readFileSync(process.argv[1])).version" "$manifest") == "$version" ]]
}

missing=()
for spec in "${pins[@]}"; do
    installed "$spec" || missing+=("$spec")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

mkdir -p "$dest_dir"
[[ -f $dest_dir/package.json ]] || printf '{"private": true}\n' >"$dest_dir/package.json"
printf 'install-node-clients: installing %s\n' "${pins[*]}" >&2
npm install --prefix "$dest_dir" --no-audit --no-fund --no-save --silent "${pins[@]}"
for spec in "${pins[@]}"; do
    installed "$spec" || die "$spec did not install into $dest_dir"
done
