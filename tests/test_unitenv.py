"""nodes/unitenv.py on its own: the entries of a distribution that reads its own unit env
file (RKE2, K3s), in each mode, and its docstring examples."""

from __future__ import annotations

import doctest

import pytest

from proxy_postrender.errors import InputError
from proxy_postrender.nodes import quoting, unitenv

ENV = [("HTTP_PROXY", "http://u:p%40ss@proxy:3128"), ("NO_PROXY", ".svc,10.0.0.0/8")]
SECRET = {"name": "demo-systemd-proxy", "key": "proxy.env"}
CA = {"path": "/etc/proxy-postrender/proxy-ca.crt", "content": "PEM\n"}


def test_the_docstring_examples() -> None:
    assert doctest.testmod(unitenv).failed == 0


def test_inline_with_the_file() -> None:
    """RKE2: the unit env file (0600, the env file lines) and the exports, nothing else."""
    files, commands = unitenv.entries(
        unitenv.Parts("/etc/default/rke2-server", True, None, None, "trust"), ENV, "an entry"
    )
    assert files == [
        {
            "path": "/etc/default/rke2-server",
            "owner": "root:root",
            "permissions": "0600",
            "content": quoting.env_file(ENV),
        }
    ]
    assert commands == [quoting.shell_export(n, v) for n, v in ENV]


def test_inline_without_the_file() -> None:
    """K3s: the exports only (its installer writes its unit env file from them)."""
    files, commands = unitenv.entries(
        unitenv.Parts("/etc/default/k3s", False, None, None, "trust"), ENV, "an entry"
    )
    assert files == []
    assert commands == [quoting.shell_export(n, v) for n, v in ENV]


@pytest.mark.parametrize("inline_file", [True, False])
def test_secret_mode_reads_the_secret_and_sources_the_file(inline_file: bool) -> None:
    files, commands = unitenv.entries(
        unitenv.Parts("/etc/default/k3s-agent", inline_file, SECRET, CA, "trust"), ENV, "x"
    )
    assert files == [
        {
            "path": "/etc/default/k3s-agent",
            "owner": "root:root",
            "permissions": "0600",
            "contentFrom": {"secret": SECRET},
        },
        CA,
    ]
    assert commands == ["trust", "set -a && . /etc/default/k3s-agent && set +a"]
    assert "u:p" not in str(files) + str(commands)


def test_shared_templates_carry_no_value() -> None:
    """A template a ClusterClass names: the value-free drop-in that names the file, and the
    line that sources it (the class's patch writes the file)."""
    files, commands = unitenv.entries(
        unitenv.Parts("/etc/default/rke2-agent", True, None, None, "trust"), ENV, "x", shared=True
    )
    assert [f["path"] for f in files] == [unitenv.dropin_path("/etc/default/rke2-agent")]
    assert files[0]["content"] == "[Service]\nEnvironmentFile=/etc/default/rke2-agent\n"
    assert commands == ["set -a && . /etc/default/rke2-agent && set +a"]
    assert "proxy:3128" not in str(files) + str(commands)


def test_a_value_the_file_cannot_hold_is_refused() -> None:
    with pytest.raises(InputError):
        unitenv.entries(
            unitenv.Parts("/etc/default/rke2-agent", True, None, None, "t"),
            [("HTTP_PROXY", "http://p:1\nX=1")],
            "an entry",
        )
