"""Per-cluster entries (spec.clusters[]) as an attacker and a new user try them: the
password gate over every entry, --cluster that could mean two entries, and the node
Secrets of the entries on a second run."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import DEPLOYMENT, GOLDEN, run_cli

CASE = GOLDEN / "fleet-entries"
PROFILE = CASE / "profile.yaml"
INPUT = (CASE / "input.yaml").read_bytes()
SECRET = "Sup3r-S3cret"
HEAD = """apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata: {name: fleet}
spec:
  httpProxy: http://proxy.corp.example:3128
"""
ENV = {"MUNICH_USER": "bob", "MUNICH_PASSWORD": SECRET}


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    return str(path)


def test_the_defaults_forbid_plaintext_holds_for_the_entry_cluster_chooses(
    tmp_path: Path,
) -> None:
    # the entry replaces spec.credentials: the defaults' gate must not go with it
    profile = _write(
        tmp_path,
        HEAD + "  credentials:\n    forbidPlaintext: true\n  clusters:\n"
        "    - match: {names: [fleet/edge-1]}\n"
        "      httpProxy: http://proxy.munich.corp.example:3128\n"
        "      credentials:\n        fromEnv: {user: MUNICH_USER, password: MUNICH_PASSWORD}\n",
    )
    proc = run_cli([profile, "--cluster", "fleet/edge-1"], DEPLOYMENT, env=ENV)
    assert proc.returncode == 1, proc.stdout
    assert proc.stdout == b""
    assert "password in clear" in proc.stderr.decode()
    assert SECRET not in proc.stderr.decode()


def test_an_entry_s_forbid_plaintext_holds_for_the_nodes_it_is_chosen_for(
    tmp_path: Path,
) -> None:
    profile = _write(
        tmp_path,
        HEAD + "  clusters:\n    - match: {names: [fleet/edge-1]}\n"
        "      httpProxy: http://proxy.munich.corp.example:3128\n"
        "      credentials:\n        fromEnv: {user: MUNICH_USER, password: MUNICH_PASSWORD}\n"
        "        forbidPlaintext: true\n",
    )
    proc = run_cli([profile], INPUT, env=ENV)
    assert proc.returncode == 1, proc.stdout
    assert proc.stdout == b""
    assert "password in clear" in proc.stderr.decode()


def _secret_mode(tmp_path: Path) -> str:
    """The golden fleet profile in secret mode, each entry with its own Secret."""
    text = (
        PROFILE.read_text()
        .replace(
            "      noProxy: [registry.munich.corp.example]       # added to spec.noProxy\n",
            "      noProxy: [registry.munich.corp.example]\n"
            "      nodes: {secretName: munich-proxy}\n",
        )
        .replace(
            "      httpsProxy: http://proxy.paris.corp.example:3128\n",
            "      httpsProxy: http://proxy.paris.corp.example:3128\n"
            "      nodes: {secretName: paris-proxy}\n",
        )
        + "  nodes:\n    credentials: secret\n    secretName: corp-proxy\n"
    )
    return _write(tmp_path, text)


def test_entries_node_secrets_are_made_anew_on_a_second_run(tmp_path: Path) -> None:
    profile = _secret_mode(tmp_path)
    once = run_cli([profile], INPUT)
    assert once.returncode == 0, once.stderr
    assert once.stdout.count(b"kind: Secret") == 3
    twice = run_cli([profile], once.stdout)
    assert twice.returncode == 0, twice.stderr
    assert twice.stdout == once.stdout
    chosen = run_cli([profile, "--cluster", "fleet/edge-1"], once.stdout)
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.stdout == once.stdout
    removed = run_cli([profile, "--remove"], once.stdout)
    assert removed.stdout == INPUT


TWO_NAMESPACES = HEAD + (
    "  clusters:\n"
    "    - match: {names: [site-a/edge]}\n      httpProxy: http://proxy.a.example:3128\n"
    "    - match: {names: [site-b/edge]}\n      httpProxy: http://proxy.b.example:3128\n"
    "      noProxy: [registry.b.example]\n"
)


def test_a_cluster_name_two_entries_name_in_other_namespaces_is_refused(
    tmp_path: Path,
) -> None:
    profile = _write(tmp_path, TWO_NAMESPACES)
    proc = run_cli([profile, "--cluster", "edge"], DEPLOYMENT)
    assert proc.returncode == 2, proc.stdout
    assert proc.stdout == b""
    said = "spec.clusters[0] and spec.clusters[1] name a Cluster edge in different namespaces"
    assert said in proc.stderr.decode()
    named = run_cli([profile, "--cluster", "site-b/edge"], DEPLOYMENT)
    assert named.returncode == 0, named.stderr
    assert b"http://proxy.b.example:3128" in named.stdout
    assert b"proxy.a.example" not in named.stdout
    shown = run_cli(["noproxy", profile, "--cluster", "edge"])
    assert shown.returncode == 2
    assert said in shown.stderr.decode()


def test_a_cluster_name_is_not_ambiguous_when_an_entry_names_it_everywhere_first(
    tmp_path: Path,
) -> None:
    text = TWO_NAMESPACES.replace("[site-a/edge]", "[edge]")
    proc = run_cli([_write(tmp_path, text), "--cluster", "edge"], DEPLOYMENT)
    assert proc.returncode == 0, proc.stderr
    assert b"http://proxy.a.example:3128" in proc.stdout


def test_a_template_of_two_clusters_whose_entries_have_the_same_settings_is_changed(
    tmp_path: Path,
) -> None:
    # one entry per cluster, the same proxy for both: nothing differs, nothing to refuse
    shared = (GOLDEN / "err-fleet-shared-template" / "input.yaml").read_bytes()
    text = (
        HEAD
        + "  clusters:\n"
        + "".join(
            f"    - match: {{names: [fleet/{name}]}}\n"
            "      httpProxy: http://proxy.munich.corp.example:3128\n"
            for name in ("edge-1", "edge-2")
        )
    )
    proc = run_cli([_write(tmp_path, text)], shared)
    assert proc.returncode == 0, proc.stderr
    assert b"export HTTP_PROXY=http://proxy.munich.corp.example:3128" in proc.stdout
    assert b"proxy.corp.example" not in proc.stdout
    # with other settings (a noProxy of its own) the second entry still differs: refused
    refused = run_cli(
        [_write(tmp_path, text + "      noProxy: [registry.munich.corp.example]\n")], shared
    )
    assert refused.returncode == 1
    assert "per-cluster entries differ" in refused.stderr.decode()
