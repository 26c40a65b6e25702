"""The subcommand table: every subcommand's words, where it is implemented and its
one-line summary, and the lookups made from it (which row argv names, the groups,
what a mistyped word was meant to be).

This module imports nothing heavy, so that the console script can read it on every
run: a subcommand's module (and click) is imported only when that subcommand runs.
Everything that names subcommands derives from :data:`SUBCOMMANDS`: the words the
fast path declines (:data:`FIRST_WORDS`), the dispatcher (:func:`find`), the
"Commands" listings in the help and the "did you mean" of errors (:func:`closest`).
"""

from __future__ import annotations

import os

from proxy_postrender.structs import FrozenStruct

PROG = "proxy-postrender"


class Subcommand(FrozenStruct):
    words: tuple[str, ...]  # ("noproxy", "check")
    module: str  # the module that implements it, imported only when it runs
    attr: str  # its click command in that module
    summary: str  # one line, for the help listings

    @property
    def name(self) -> str:
        return " ".join(self.words)


_PACKAGE = "proxy_postrender.cli.commands"

SUBCOMMANDS = (
    Subcommand(
        ("noproxy",),
        f"{_PACKAGE}.noproxy",
        "noproxy_command",
        "Print the NO_PROXY a profile gives (its sources with --explain).",
    ),
    Subcommand(
        ("noproxy", "check"),
        f"{_PACKAGE}.noproxy",
        "check_command",
        "Tell how Go, curl, Python, wget, Java and Node.js read a NO_PROXY.",
    ),
    Subcommand(
        ("kustomize-plugin", "install"),
        f"{_PACKAGE}.kustomize_plugin",
        "install_command",
        "Install proxy-postrender as a kustomize exec plugin.",
    ),
    Subcommand(
        ("patches",),
        f"{_PACKAGE}.patches",
        "patches_command",
        "Print the change as kustomize patches (for a Flux HelmRelease).",
    ),
    Subcommand(
        ("schema",),
        f"{_PACKAGE}.schema",
        "schema_command",
        "Print the JSON Schema of a ProxyProfile.",
    ),
    Subcommand(
        ("help",),
        f"{_PACKAGE}.help",
        "help_command",
        "Show the help of proxy-postrender or of one command.",
    ),
)
_BY_WORDS = {row.words: row for row in SUBCOMMANDS}
# The main command, the filter, as click reads it (the fast path reads most runs).
MAIN = Subcommand(
    (),
    f"{_PACKAGE}.main",
    "command",
    "Inject HTTP(S) proxy settings into a rendered manifest stream.",
)

# What argv[0] must be for a subcommand: never a profile argument of the main command.
FIRST_WORDS = frozenset(row.words[0] for row in SUBCOMMANDS)
# Word sequences that only lead to subcommands ("kustomize-plugin"): groups.
GROUPS = frozenset(
    row.words[:n] for row in SUBCOMMANDS for n in range(1, len(row.words))
) - frozenset(_BY_WORDS)


class Choice(FrozenStruct):
    """What argv names: a subcommand, the main command (:data:`MAIN`, ``words`` empty)
    or a group (``row`` None); ``rest`` is what follows the words."""

    words: tuple[str, ...]
    row: Subcommand | None
    rest: list[str]


def find(argv: list[str]) -> Choice:
    """The subcommand or group that argv's leading words name (the longest), else the
    main command."""
    best: tuple[str, ...] = ()
    for words in (*_BY_WORDS, *GROUPS):
        if len(words) > len(best) and tuple(argv[: len(words)]) == words:
            best = words
    return Choice(best, _BY_WORDS.get(best) if best else MAIN, argv[len(best) :])


def row(words: tuple[str, ...]) -> Subcommand | None:
    return _BY_WORDS.get(words)


def below(words: tuple[str, ...]) -> list[Subcommand]:
    """The subcommands under ``words``, in table order (all of them under ``()``)."""
    return [r for r in SUBCOMMANDS if len(r.words) > len(words) and r.words[: len(words)] == words]


def next_words(words: tuple[str, ...]) -> list[str]:
    """The words that may follow ``words`` ("check" after "noproxy")."""
    found: dict[str, None] = {}
    for r in below(words):
        found[r.words[len(words)]] = None
    return list(found)


def looks_like_a_word(arg: str) -> bool:
    """Whether ``arg`` could be a mistyped command word (not a path, a URL or an option)."""
    return arg[:1].isalpha() and arg.replace("-", "").isalnum() and arg.isascii()


def closest(word: str, words: tuple[str, ...]) -> str | None:
    """The command ``word`` was probably meant to name, after ``words``: one of the next
    words, or at the top level also the last word of a deeper command ("check" is
    "noproxy check"). None when nothing is close."""
    if not looks_like_a_word(word):
        return None
    candidates: dict[str, tuple[str, ...]] = {}
    for r in below(words):
        candidates.setdefault(r.words[len(words)], r.words[: len(words) + 1])
    if not words:
        for r in SUBCOMMANDS:
            candidates.setdefault(r.words[-1], r.words)
    lowered = word.lower()
    if lowered in candidates:
        return " ".join(candidates[lowered])
    import difflib  # lazy: only on the way to an error

    close = difflib.get_close_matches(lowered, list(candidates), n=1, cutoff=0.75)
    if not close and len(lowered) >= 4:
        close = [key for key in candidates if key.startswith(lowered)][:1]
    return " ".join(candidates[close[0]]) if close else None


def misread_profile(arg: str, words: tuple[str, ...] = ()) -> str | None:
    """The error for a profile argument of command ``words`` that is no file and looks
    like a mistyped subcommand ("patch", "noproxy chek"), else None. A file of that
    name is always the profile."""
    if not looks_like_a_word(arg) or os.path.lexists(arg):
        return None
    meant = closest(arg, words)
    if meant is None:
        return None
    return f"no profile file '{arg}' (did you mean the subcommand '{meant}'?)"


def unknown(words: tuple[str, ...], word: str) -> str:
    """The error for ``word`` where a subcommand of ``words`` must follow."""
    shown = f" '{' '.join((*words, word))}'" if looks_like_a_word(word) else ""
    meant = closest(word, words)
    if meant is not None:
        hint = f"did you mean '{meant}'?"
    else:
        hint = f"see '{' '.join((PROG, *words))} --help'"
    return f"no {'subcommand' if words else 'command'}{shown} ({hint})"


def needs_subcommand(words: tuple[str, ...]) -> str:
    """The error for a group named alone ("kustomize-plugin")."""
    name = " ".join(words)
    return (
        f"'{name}' needs a subcommand ({', '.join(next_words(words))}); see '{PROG} {name} --help'"
    )
