"""The subcommand table and what the console script makes of argv with it: groups,
help, "did you mean", profile arguments named like commands, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import click
import pytest

from proxy_postrender.cli import entry, options, table
from proxy_postrender.cli.commands import base
from tests.helpers import GOLDEN, ROOT, VERSION_LINE, run_cli

DEPLOYMENT = (GOLDEN / "helm3-chart" / "input.yaml").read_bytes()
PROFILE = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata:\n  name: c\n"
    "spec:\n  httpProxy: http://proxy.corp.example:3128\n  noProxy: [example.com]\n"
)


def cli(args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the console entry in-process: (exit code, stdout, stderr)."""
    code = 0
    try:
        entry.main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def usage_error(args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line a usage error prints (exit 2, stdout empty), without its prefix."""
    code, out, err = cli(args, capsys)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith("proxy-postrender: error: "), err
    return err.removeprefix("proxy-postrender: error: ").rstrip("\n")


# -- the table ---------------------------------------------------------------------------


def test_the_table_names_each_subcommand_once_and_each_row_loads() -> None:
    names = [row.words for row in table.SUBCOMMANDS]
    assert len(names) == len(set(names))
    assert set(names) >= {
        ("patches",),
        ("kustomize-plugin", "install"),
        ("noproxy",),
        ("noproxy", "check"),
        ("schema",),
        ("help",),
    }
    for row in table.SUBCOMMANDS:
        loaded = base.load(row)
        assert isinstance(loaded, click.Command) and loaded.name == row.name
        assert row.summary and "\n" not in row.summary
    assert base.load(table.MAIN).name == "proxy-postrender"
    assert {("kustomize-plugin",)} == table.GROUPS
    assert {"patches", "kustomize-plugin", "noproxy", "schema", "help"} == table.FIRST_WORDS
    assert table.PROG == base.PROG == "proxy-postrender"


def test_the_fast_path_declines_exactly_the_tables_first_words() -> None:
    for word in table.FIRST_WORDS:
        assert options.parse_plain([word]) is None
        assert options.parse_plain([word, "x.yaml"]) is None
    for word in ("patch", "check", "install", "chek", "corp", "./patches"):
        assert options.parse_plain([word]) == options.Params(profile_arg=word)


@pytest.mark.parametrize(
    ("argv", "words", "rest"),
    [
        ([], (), []),
        (["p.yaml", "--report"], (), ["p.yaml", "--report"]),
        (["noproxy"], ("noproxy",), []),
        (["noproxy", "check", "a"], ("noproxy", "check"), ["a"]),
        (["noproxy", "chek"], ("noproxy",), ["chek"]),
        (["kustomize-plugin"], ("kustomize-plugin",), []),
        (["kustomize-plugin", "install", "-h"], ("kustomize-plugin", "install"), ["-h"]),
        (["--report", "noproxy"], (), ["--report", "noproxy"]),
    ],
)
def test_find_takes_the_longest_leading_words(
    argv: list[str], words: tuple[str, ...], rest: list[str]
) -> None:
    choice = table.find(argv)
    assert (choice.words, choice.rest) == (words, rest)
    assert (choice.row is None) == (words in table.GROUPS)
    assert (choice.row is table.MAIN) == (words == ())


# -- groups ------------------------------------------------------------------------------


def test_a_group_alone_needs_a_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(["kustomize-plugin"], capsys) == (
        "'kustomize-plugin' needs a subcommand (install); "
        "see 'proxy-postrender kustomize-plugin --help'"
    )


def test_a_groups_help_lists_its_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--help", "-h"):
        code, out, err = cli(["kustomize-plugin", flag], capsys)
        assert (code, err) == (0, "")
        assert out.startswith("Usage: proxy-postrender kustomize-plugin [OPTIONS] COMMAND")
        commands_section = out.split("Commands:")[1]
        assert commands_section.split()[0] == "install"
        assert "Install proxy-postrender as a kustomize exec plugin." in out


def test_a_mistyped_subcommand_of_a_group_gets_did_you_mean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert usage_error(["kustomize-plugin", "instal"], capsys) == (
        "no subcommand 'kustomize-plugin instal' (did you mean 'kustomize-plugin install'?)"
    )
    assert usage_error(["kustomize-plugin", "remove"], capsys) == (
        "no subcommand 'kustomize-plugin remove' (see 'proxy-postrender kustomize-plugin --help')"
    )


def test_a_subcommand_under_a_group_still_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = cli(["kustomize-plugin", "install", "--plugin-home", str(tmp_path)], capsys)
    assert (code, err) == (0, "")
    assert out.startswith(f"installed {tmp_path}/proxy-postrender.io/")


# -- help --------------------------------------------------------------------------------


def test_help_alone_is_the_top_level_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(["help"], capsys)
    assert (code, err) == (0, "")
    assert out.startswith("Usage: proxy-postrender [OPTIONS] [PROFILE]")
    assert cli(["--help"], capsys) == (0, out, "")
    listed = out.split("Commands:")[1]
    for row in table.SUBCOMMANDS:
        assert f"  {row.name}  " in listed


@pytest.mark.parametrize(
    "words", [["noproxy"], ["noproxy", "check"], ["kustomize-plugin"], ["schema"], ["help"]]
)
def test_help_names_a_command(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(["help", *words], capsys)
    assert (code, err) == (0, "")
    assert out.startswith(f"Usage: proxy-postrender {' '.join(words)} ")
    assert cli([*words, "--help"], capsys) == (0, out, "")


def test_a_commands_help_lists_the_subcommands_below_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = cli(["noproxy", "--help"], capsys)
    assert "noproxy check" in out.split("Commands:")[1]
    _, out, _ = cli(["noproxy", "check", "--help"], capsys)
    assert "Commands:" not in out


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["nosuch"], "no command 'nosuch' (see 'proxy-postrender --help')"),
        (["hlep"], "no command 'hlep' (did you mean 'help'?)"),
        (["chek"], "no command 'chek' (did you mean 'noproxy check'?)"),
        (["noproxy", "chek"], "no subcommand 'noproxy chek' (did you mean 'noproxy check'?)"),
        (["patches", "x"], "no subcommand 'patches x' (see 'proxy-postrender patches --help')"),
        (["kustomize-plugin", "instal"], "did you mean 'kustomize-plugin install'?"),
    ],
)
def test_help_of_an_unknown_command_is_a_usage_error(
    words: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert message in usage_error(["help", *words], capsys)


# -- profile arguments named like commands -----------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["patch"], "no profile file 'patch' (did you mean the subcommand 'patches'?)"),
        (
            ["--http-proxy", "http://p:1", "patchs"],
            "no profile file 'patchs' (did you mean the subcommand 'patches'?)",
        ),
        (["schemas"], "no profile file 'schemas' (did you mean the subcommand 'schema'?)"),
        (
            ["kustomize-plugins", "install"],
            "no profile file 'kustomize-plugins' (did you mean the subcommand 'kustomize-plugin'?)",
        ),
        (["check"], "no profile file 'check' (did you mean the subcommand 'noproxy check'?)"),
    ],
)
def test_a_missing_profile_named_like_a_command_says_so(
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert usage_error(argv, capsys) == message


def test_the_console_script_says_so_too(tmp_path: Path) -> None:
    proc = run_cli(["patch"], DEPLOYMENT, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr == (
        b"proxy-postrender: error: no profile file 'patch' (did you mean the subcommand "
        b"'patches'?)\n"
    )


@pytest.mark.parametrize("name", ["corp", "cache", "./patch", "patch.yaml"])
def test_a_missing_profile_not_like_a_command_keeps_its_message(name: str, tmp_path: Path) -> None:
    proc = run_cli([name], DEPLOYMENT, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr.decode() == (
        f"proxy-postrender: error: cannot read profile {name}: No such file or directory\n"
    )


def test_an_existing_file_named_like_a_typo_is_the_profile(tmp_path: Path) -> None:
    (tmp_path / "patch").write_text(PROFILE)
    proc = run_cli(["patch"], DEPLOYMENT, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert b"http://proxy.corp.example:3128" in proc.stdout


def test_a_subcommand_word_wins_over_a_file_of_that_name(tmp_path: Path) -> None:
    """``noproxy`` runs the subcommand even beside a file named noproxy; the file is
    the profile as ``./noproxy`` or ``--profile noproxy`` (as the help says)."""
    (tmp_path / "noproxy").write_text(PROFILE)
    sub = run_cli(["noproxy", "--no-proxy", "a.example"], cwd=tmp_path)
    assert sub.returncode == 0, sub.stderr
    assert sub.stdout.decode().startswith("a.example,.a.example,localhost,")
    for argv in (["./noproxy"], ["--profile", "noproxy"]):
        proc = run_cli(argv, DEPLOYMENT, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert b"http://proxy.corp.example:3128" in proc.stdout


@pytest.mark.parametrize(
    "argv",
    [["noproxy", "chek"], ["noproxy", "chek", "example.com"], ["noproxy", "--explain", "chek"]],
)
def test_noproxy_reads_a_mistyped_check_as_did_you_mean(
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert usage_error(argv, capsys) == (
        "no profile file 'chek' (did you mean the subcommand 'noproxy check'?)"
    )


# -- options, version, secrecy -----------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["--bogus"],
        ["p.yaml", "--bogus"],
        ["noproxy", "--bogus"],
        ["noproxy", "check", "--bogus"],
        ["kustomize-plugin", "--bogus"],
        ["kustomize-plugin", "install", "--bogus"],
        ["help", "--bogus"],
        ["schema", "--bogus"],
    ],
)
def test_unknown_options_keep_clicks_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    message = usage_error(argv, capsys)
    words = " ".join(a for a in argv if not a.startswith("-") and "." not in a)
    assert message.startswith("No such option '--bogus'")
    assert message.endswith(f"(see '{' '.join(('proxy-postrender', words)).strip()} --help')")


def test_version_and_help_are_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["--version"], capsys)
    assert (code, out) == (0, VERSION_LINE + "\n")
    code, out, _ = cli(["-h"], capsys)
    assert code == 0 and out.startswith("Usage: proxy-postrender [OPTIONS] [PROFILE]")
    assert "--forbid-plaintext-credentials" in out and "./NAME or --profile NAME" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["help", "http://alice:Pw-SECRET@proxy:3128"],
        ["kustomize-plugin", "http://alice:Pw-SECRET@proxy:3128"],
        ["noproxy", "check", "--bogus=Pw-SECRET"],
    ],
)
def test_usage_errors_never_echo_a_url(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert "Pw-SECRET" not in usage_error(argv, capsys)


# -- start-up ----------------------------------------------------------------------------


def test_a_plain_invocation_imports_neither_click_nor_a_subcommand() -> None:
    argv = ["-m", "proxy_postrender", "--http-proxy", "http://p:1"]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        input=b"",
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.decode().splitlines()]
    assert "proxy_postrender.cli.table" in imported  # the table: it is light
    assert [name for name in imported if name.split(".")[0] == "click"] == []
    assert [name for name in imported if name.startswith("proxy_postrender.cli.commands")] == []


# -- schema ------------------------------------------------------------------------------


def test_schema_prints_the_profile_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    from proxy_postrender.profile import schema

    code, out, err = cli(["schema"], capsys)
    assert (code, err) == (0, "")
    assert out.endswith("\n")
    assert json.loads(out) == json.loads(schema.text())
    assert isinstance(json.loads(out), dict)


# -- patches: one error path -------------------------------------------------------------

MALFORMED = b"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\ndata: [\n"


def test_patches_pass_over_a_malformed_document_the_filter_passes_through(
    tmp_path: Path,
) -> None:
    """Finding 4: a document that is no target (and no valid YAML) holds nothing to patch;
    the filter passes it through, and patches does not fall over it."""
    profile = tmp_path / "p.yaml"
    profile.write_text(PROFILE)
    proc = run_cli(["patches", str(profile)], DEPLOYMENT + MALFORMED)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert b"kind: Deployment" in proc.stdout and b"HTTP_PROXY" in proc.stdout


def test_patches_errors_are_one_redacted_line_with_the_spec_exit_code(tmp_path: Path) -> None:
    """Finding 4: the subcommands share the filter's error path."""
    bad = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: 3}\n"
    url = "http://build:Pw-SECRET@proxy:3128"
    proc = run_cli(["patches", "--http-proxy", url], DEPLOYMENT + b"---\n" + bad)
    assert proc.returncode == 1 and proc.stdout == b""
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("proxy-postrender: error: document 6 ")
    usage = run_cli(["patches", "--http-proxy", url, "a.yaml", url])
    assert usage.returncode == 2 and b"Pw-SECRET" not in usage.stderr
