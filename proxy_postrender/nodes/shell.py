"""Which variables a shell command assigns: read the way a POSIX shell splits it.

Used by the watch for other owners of the proxy settings (``owners.py``): a
``preKubeadmCommands`` entry may set a proxy variable on any of its lines, in any
statement of a line, and in any of these forms:

- ``NAME=value`` at the start of a statement, also several (``A=1 NAME=2 kubeadm``);
- after ``export``, ``declare``, ``typeset``, ``readonly`` or ``local``, with options,
  also after other names (``export A=1 NAME=2``, ``declare -x NAME=2``); not when the
  options take the export away (``export -n``, ``declare +x``);
- after ``env``, ``sudo``, ``command``, ``builtin``, ``exec``, ``nohup``, ``nice``,
  ``stdbuf`` or ``timeout`` and their options (``env HTTPS_PROXY=... kubeadm join``,
  ``timeout 300 env HTTPS_PROXY=... kubeadm join``); a command word written with a
  backslash (``\\export``) is that command;
- inside the script of a shell run with ``-c`` (``sh -c "HTTP_PROXY=... kubeadm
  join"``: the command it runs gets the value) and the words of ``eval``.

Quotes and backslashes are honoured; ``#`` starts a comment; newlines, ``;``, ``&``,
``|``, ``(``, ``)`` and backquotes separate statements. A best-effort reader for
warnings: no expansion, no here-documents, no functions.
"""

from __future__ import annotations

import re

_SEPARATORS = "\n;&|()`"
_BLANKS = " \t\r"
_KEYWORDS = frozenset({"!", "{", "}", "if", "then", "elif", "else", "do", "while", "until", "time"})
_DECLARE = frozenset({"export", "declare", "typeset", "readonly", "local"})
# wrappers that run a command with assignments before it: their options that take an
# argument (a separate word), and how many words they take before the command
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0),
    "sudo": (frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "nohup": (frozenset(), 0),
    "nice": (frozenset({"-n"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),  # its duration
}
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "ksh", "zsh"})
_DEPTH = 4  # scripts inside scripts read at most this deep
_ASSIGNMENT = r"([A-Za-z_][A-Za-z0-9_]*)\+?="


def _quoted_end(text: str, start: int) -> int:
    """The index after the quote that closes the one at ``start`` (or the end)."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        if quote == '"' and text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return len(text)


def statements(text: str) -> list[list[str]]:
    """The words of each statement in ``text``, quotes kept as written."""
    result: list[list[str]] = [[]]
    word = ""
    reading = False  # inside a word (which may be empty: '')
    i = 0
    while i < len(text):
        char = text[i]
        if char in "'\"":
            end = _quoted_end(text, i)
            word, reading, i = word + text[i:end], True, end
        elif char == "\\":
            if text[i + 1 : i + 2] != "\n":  # a backslash-newline joins two lines
                word, reading = word + text[i : i + 2], True
            i += 2
        elif char == "#" and not reading:
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline
        elif char in _BLANKS or char in _SEPARATORS:
            if reading:
                result[-1].append(word)
                word, reading = "", False
            if char in _SEPARATORS and result[-1]:
                result.append([])
            i += 1
        else:
            word, reading, i = word + char, True, i + 1
    if reading:
        result[-1].append(word)
    return [words for words in result if words]


def _unquoted(word: str) -> str:
    return word.replace("'", "").replace('"', "")


def _declared(builtin: str, words: list[str]) -> list[str]:
    """The names a declaration builtin assigns, unless its options take the export away."""
    options = [w for w in words if w[:1] in ("-", "+") and len(w) > 1]
    if any(o.startswith("+") and "x" in o for o in options):
        return []
    if builtin == "export" and any(o.startswith("-") and "n" in o for o in options):
        return []
    found = (re.match(_ASSIGNMENT, _unquoted(w)) for w in words)
    return [m.group(1) for m in found if m is not None]


def _script(words: list[str]) -> str | None:
    """The script a shell's arguments run with ``-c`` (``-ec`` too), unquoted; None."""
    for index, word in enumerate(words[:-1]):
        if not word.startswith("-"):
            return None
        if "c" in word[1:] and not word.startswith("--"):
            return _text_of(words[index + 1])
    return None


def _text_of(word: str) -> str:
    """A word as the shell hands it on: quotes taken off, ``\\x`` in double quotes and
    outside quotes made ``x``."""
    text, i = "", 0
    while i < len(word):
        char = word[i]
        if char == "'":
            end = _quoted_end(word, i)
            text, i = text + word[i + 1 : end - 1], end
        elif char == '"':
            end = _quoted_end(word, i)
            text, i = text + re.sub(r"\\(.)", r"\1", word[i + 1 : end - 1]), end
        elif char == "\\":
            text, i = text + word[i + 1 : i + 2], i + 2
        else:
            text, i = text + char, i + 1
    return text


def assigned(words: list[str], depth: int = 0) -> list[str]:
    """The names one statement assigns (see the module docstring)."""
    names: list[str] = []
    i = 0
    while i < len(words) and words[i] in _KEYWORDS:
        i += 1
    while i < len(words):
        word = words[i]
        match = re.match(_ASSIGNMENT, word)
        command = word[1:] if word.startswith("\\") else word
        program = command.rsplit("/", 1)[-1]
        if match is not None:
            names.append(match.group(1))
            i += 1
        elif command in _DECLARE:
            return names + _declared(command, words[i + 1 :])
        elif command in _WRAPPERS:
            i = _after_wrapper(words, i + 1, *_WRAPPERS[command])
        elif depth < _DEPTH and (program in _SHELLS or command == "eval"):
            rest = words[i + 1 :]
            script = " ".join(_text_of(w) for w in rest) if command == "eval" else _script(rest)
            return names + (assigned_names(script, depth + 1) if script else [])
        else:
            break
    return names


def _after_wrapper(words: list[str], i: int, takes: frozenset[str], operands: int) -> int:
    """The index of the command a wrapper runs: after its options (those in ``takes``
    with their argument) and its ``operands`` (timeout's duration)."""
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in takes else 1
    return i + operands


def assigned_names(text: str, depth: int = 0) -> list[str]:
    """Every name the statements of ``text`` assign, in order (repeats kept)."""
    return [name for words in statements(text) for name in assigned(words, depth)]
