"""The console script's own reading of plain invocations agrees with click's."""

from __future__ import annotations

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy_postrender.cli import options, table
from proxy_postrender.cli.commands import main

WORDS = st.sampled_from(
    [
        *(option.flag for option in options.OPTIONS),
        *(f"{option.flag}=" for option in options.OPTIONS),
        *(f"{option.flag}=x.yaml" for option in options.OPTIONS),
        "--on-conflict=keep",
        "--on-conflict=bogus",
        "keep",
        "override",
        "profile.yaml",
        "other.yaml",
        "-",
        "--",
        "-h",
        "--help",
        "--version",
        "--unknown",
        "-x",
        "",
        *sorted(table.FIRST_WORDS),
        "patch",  # no subcommand: a profile argument
        "check",
    ]
)


def click_params(argv: list[str]) -> options.Params | None:
    """What click makes of ``argv`` for the main command (None: it refuses it)."""
    try:
        context = main.command.make_context(table.PROG, list(argv), resilient_parsing=False)
    except (click.exceptions.Exit, click.ClickException):
        return None
    return options.Params(**context.params)


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=6))
def test_what_the_fast_reader_reads_click_reads_the_same(argv: list[str]) -> None:
    params = options.parse_plain(argv)
    if params is not None:
        assert click_params(argv) == params


@pytest.mark.parametrize(
    "argv",
    [
        ["profile.yaml"],
        ["--profile", "p.yaml", "--report"],
        ["--report", "r.txt", "p.yaml"],
        ["p.yaml", "--report", "--remove"],
        ["--on-conflict", "override", "--namespace=ns", "--diff", "p.yaml"],
        ["--http-proxy", "http://proxy:3128", "--no-proxy=.svc"],
        [],
    ],
)
def test_the_invocations_pipelines_make_are_read_without_click(argv: list[str]) -> None:
    params = options.parse_plain(argv)
    assert params is not None
    assert click_params(argv) == params


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["--version"], ["a", "b"], ["--remove", "--remove"], ["--report=-"]],
)
def test_the_rest_goes_to_click(argv: list[str]) -> None:
    assert options.parse_plain(argv) is None


@pytest.mark.parametrize("word", sorted(table.FIRST_WORDS))
def test_the_subcommands_of_the_table_go_to_click(word: str) -> None:
    assert options.parse_plain([word]) is None
    assert options.parse_plain([word, "--report"]) is None
    assert options.parse_plain(["--report", word]) is not None  # a value, not a subcommand


def test_click_the_table_and_the_parameters_agree() -> None:
    declared = {name for param in main.command.params for name in param.opts}
    assert declared - {"--version", "--help", "-h"} == {
        options.POSITIONAL,
        *(option.flag for option in options.OPTIONS),
    }
    fields = {options.POSITIONAL, *(option.dest for option in options.OPTIONS)}
    assert set(options.Params._fields) == fields
    assert click_params([]) == options.Params()
