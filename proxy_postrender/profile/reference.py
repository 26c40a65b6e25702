"""The field reference of docs/profile.md, generated from the option tables.

The reference sits between two marker lines in docs/profile.md; the prose
around it is written by hand. ``python -m proxy_postrender.profile.reference
--write`` (``make docs``) rewrites it, ``--check`` exits 1 when it is stale;
a test checks it too. Not imported on the tool's normal path.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.profile import tables

if TYPE_CHECKING:
    from proxy_postrender.profile.options import Option, Section

BEGIN = "<!-- generated: field reference (make docs) -->"
END = "<!-- end of generated reference -->"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "profile.md"
MODULE = "proxy_postrender.profile.reference"

_LISTS = "a list or a comma-separated string"
_WORDS = {
    "any": "any",
    "bool": "boolean",
    "string": "string",
    "file": "file name",
    "pem": "PEM text",
    "label-key": "label key",
    "strings": "list of strings",
    "env-names": "list of variable names",
    "labels": "map of strings",
    "proxy-url": "proxy URL",
    "no-proxy": f"NO_PROXY entries: {_LISTS}",
    "host": "host name",
    "endpoint": "`host[:port]`",
    "path": "absolute path",
    "node-path": "absolute path, no `..`",
    "drop-in": "absolute path `UNIT.d/NAME.conf`",
    "env-name": "variable name",
    "variable": "name of a variable of the tool's environment (must be set)",
    "object-name": "Kubernetes object name",
    "timestamp": "time in UTC, `YYYY-MM-DDTHH:MM:SSZ`",
    "jsonpath": "JSONPath",
}
_ENTRIES: dict[tuple[str, ...], str] = {
    ("cidr", "ip"): "CIDRs or IP addresses",
    ("ip", "domain"): "IP addresses or host names",
}


_EXPANDS = " May hold `${VAR}` ([environment variables](#environment-variables-in-values))."


def heading(section: Section) -> str:
    return f"`{section.name}`" if section.name else "The object"


def anchor(section: Section) -> str:
    """GitHub's anchor of the section's heading."""
    text = heading(section).lower()
    return re.sub(r"[^a-z0-9 _-]", "", text).replace(" ", "-")


def _link(section: Section) -> str:
    return f"[`{section.name}`](#{anchor(section)})"


def _values(values: tuple[str, ...]) -> str:
    return ", ".join(f"`{v}`" for v in values)


def kind_words(option: Option) -> str:
    """What the field holds, in words."""
    kind = option.kind
    name = kind.name
    if name in _WORDS:
        return _WORDS[name]
    if name == "const":
        return f"`{kind.values[0]}`"
    if name == "choice":
        return f"one of {_values(kind.values)}"
    if name == "presets":
        return f"list of {_values(kind.values)}"
    if name == "addresses":
        return f"{_ENTRIES[kind.values]}: {_LISTS}"
    if name == "setters":
        return f"map of JSONPath to one of {_values(kind.values)}"
    table = kind.table()
    assert table is not None, name
    if name == "mapping":
        return f"mapping: {_link(table)}"
    if name == "mappings":
        return f"list of mappings: {_link(table)}"
    if name == "rules":
        return f"a rule or a list of rules: {_link(table)}"
    raise ValueError(f"no words for the kind {name}")


def default_words(option: Option) -> str:
    if option.required:
        return "required"
    if option.shown is not None:
        return option.shown
    value = option.default
    if value is None or isinstance(value, dict):
        return ""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, tuple):
        return f"`[{', '.join(value)}]`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _path(section: Section, option: Option) -> str:
    return f"{section.name}.{option.name}" if section.name else option.name


def table(section: Section) -> list[str]:
    lines = [f"### {heading(section)}", ""]
    doc = section.doc
    if section.one_of:
        doc += f" Give exactly one of {' and '.join(f'`{n}`' for n in section.one_of)}."
    if doc:
        lines += [doc.strip(), ""]
    lines += ["| field | type | default | meaning |", "|---|---|---|---|"]
    for option in section.options:
        cells = (
            f"`{_path(section, option)}`",
            kind_words(option),
            default_words(option),
            option.doc + (_EXPANDS if option.expand else ""),
        )
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return [*lines, ""]


def markdown() -> str:
    """The generated block, markers included."""
    lines = [
        BEGIN,
        "<!-- from proxy_postrender/profile/tables.py: edit the tables, then run `make docs` -->",
        "",
    ]
    for section in tables.sections():
        lines += table(section)
    return "\n".join([*lines, END])


def splice(document: str) -> str:
    """``document`` with the generated block replaced by the current one."""
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the markers {BEGIN!r} and {END!r} are missing")
    return document[:start] + markdown() + document[end + len(END) :]


def main(argv: list[str]) -> int:
    if argv not in (["--write"], ["--check"]):
        print(f"usage: python -m {MODULE} --write | --check", file=sys.stderr)
        return 2
    current = DOCS.read_text(encoding="utf-8")
    wanted = splice(current)
    if argv == ["--check"]:
        if wanted != current:
            print(f"{DOCS} is stale: run make docs", file=sys.stderr)
            return 1
        return 0
    if wanted != current:
        DOCS.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
