#!/usr/bin/env bash
# The HTTP clients the NO_PROXY models are checked against, from Debian's
# packages when missing: curl, wget, Go (its net/http: NO_PROXY decisions in
# tests/goclient, proxy URL parsing in tests/gourl; both built offline, no
# modules), and unshare + ip for the private network namespace the curl and
# wget probes run in; squid, cloud-init and systemd (below). One apt-get run for all.
set -euo pipefail
missing=()
command -v curl >/dev/null || missing+=(curl)
command -v wget >/dev/null || missing+=(wget)
command -v go >/dev/null || missing+=(golang-go)
command -v unshare >/dev/null || missing+=(util-linux)
command -v ip >/dev/null || missing+=(iproute2)
command -v java >/dev/null || missing+=(default-jre-headless)  # tests/javaclient (JDK 11+)
command -v gpg >/dev/null || missing+=(gpg gpgconf)  # tests/test_dist.py: signs the Helm plugin tarball
# tests/test_squid.py: a real proxy (squid on loopback, Basic auth through its
# basic_ncsa_auth helper and an `openssl passwd -apr1` file; the test runs its own
# `squid -N`, never the squid.service the package enables), and mount for the
# private /etc/hosts of its namespace
[ -x /usr/sbin/squid ] || missing+=(squid)
command -v openssl >/dev/null || missing+=(openssl)
command -v mount >/dev/null || missing+=(mount)
# tests/test_node_programs.py reads the node bootstrap output with the real programs:
# cloud-init (its Jinja pass, schema check, write_files and runcmd modules), systemd
# (systemd-analyze verify; systemd --test as nobody, through setpriv) and dash (/bin/sh).
command -v cloud-init >/dev/null || missing+=(cloud-init)
{ command -v systemd-analyze >/dev/null && [ -x /lib/systemd/systemd ]; } || missing+=(systemd)
command -v setpriv >/dev/null || missing+=(util-linux)
command -v dash >/dev/null || missing+=(dash)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "installing ${missing[*]} from Debian's packages" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
$sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
