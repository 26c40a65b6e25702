"""The vocabulary of the option tables: a field (:class:`Option`), a mapping of
fields (:class:`Section`) and the kinds of value a field may hold (:class:`Kind`).

The tables in :mod:`.tables` are written in these words; :mod:`.check`
validates a profile against them, :mod:`.schema` turns them into a JSON
Schema and :mod:`.reference` into the field reference of docs/profile.md.
Everything here is plain data, built once at import.

What an explicit ``null`` (or an absent field) means is part of a field's
declaration, because the profile format grew with different answers:

- ``"default"``: absent or null gives the default;
- ``"check"``: absent gives the default, null is checked like any value (and
  refused by every kind that uses it);
- ``"none"``: absent gives the default, null gives ``None`` (e.g. "no kubelet
  drop-in");
- ``"empty"``: absent gives the default, null gives ``()`` (e.g. "no presets");
- ``"falsy"``: absent or any false value (``null``, ``""``, ``[]``, ``{}``,
  ``0``, ``false``) gives the default.
"""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    # a cross-field rule of a section: (its validated values, where) -> None or ProfileError
    Rule = Callable[[dict[str, Any], str], None]


class Kind(FrozenStruct):
    """A kind of value. ``name`` picks the check (check.py), the JSON Schema
    (schema.py) and the words in the reference (reference.py)."""

    name: str
    values: tuple[str, ...] = ()  # choice, presets, setters: the allowed values; addresses: kinds
    section: Section | None = None  # mapping, mappings, rules: the fields of each mapping
    limit: int | None = None  # object-name: the longest name
    # mapping, mappings, rules: the function that makes the section on first use, in
    # place of ``section`` (tables of list items a profile rarely has: start-up)
    later: Callable[[], Section] | None = None

    def table(self) -> Section | None:
        """The fields of each mapping (mapping, mappings, rules), made now if need be."""
        return self.section if self.later is None else self.later()


class Option(FrozenStruct):
    """One field of a section."""

    name: str
    kind: Kind
    doc: str  # the meaning, in Markdown, for docs/profile.md and the schema's description
    default: Any = None
    null: str = "default"  # what null (or absence) means: see the module's docstring
    required: bool = False  # absent is checked like null (and refused by the kind)
    secret: bool = False  # variable: the variable's value is registered with the redactor
    messages: Mapping[str, str] | None = None  # message templates that replace the kind's
    shown: str | None = None  # the default in words, when ``default`` does not say it
    expand: bool = False  # may hold ``${VAR}`` references to the tool's environment


class Section(FrozenStruct):
    """A mapping of fields; ``name`` is its path in the docs (``spec.cluster``)."""

    name: str
    options: tuple[Option, ...]
    names: frozenset[str]  # the field names, for the unknown-field check
    doc: str = ""
    messages: Mapping[str, str] | None = None  # templates for "mapping", "keys", "required"
    switch: str | None = None  # a boolean field that, false, turns the other fields off
    one_of: tuple[str, ...] = ()  # exactly one of these fields must be given
    rule: Rule | None = None  # the section's cross-field rule, run after its fields
    root: bool = False  # fields are named "WHERE: name" rather than "WHERE.name"


if TYPE_CHECKING:
    # the fields of each mapping: a section, or the function that makes it on first use
    Fields = Section | Callable[[], Section]


def section(
    name: str,
    *options: Option,
    doc: str = "",
    messages: Mapping[str, str] | None = None,
    switch: str | None = None,
    one_of: tuple[str, ...] = (),
    rule: Rule | None = None,
    root: bool = False,
) -> Section:
    names = frozenset(option.name for option in options)
    return Section(name, options, names, doc, messages, switch, one_of, rule, root)


# --- kinds ------------------------------------------------------------------------
# A kind's name is the key of its check in check.py, of its schema in schema.py
# and of its words in reference.py.

ANY = Kind("any")  # not checked (metadata)
BOOL = Kind("bool")
STRING = Kind("string")
STRINGS = Kind("strings")  # a list of non-empty strings (globs, kinds)
LABELS = Kind("labels")  # label key -> string value
LABEL_KEY = Kind("label-key")  # a non-empty string
PROXY_URL = Kind("proxy-url")  # http(s)://[user[:password]@]host[:port]
NO_PROXY = Kind("no-proxy")  # NO_PROXY entries: a list or a comma-separated string
HOST = Kind("host", ("domain",))  # a host name (the cluster domain)
ENDPOINT = Kind("endpoint")  # host, host:port or [v6]:port
PATH = Kind("path")  # an absolute path of plain characters
NODE_PATH = Kind("node-path")  # the same, without ".." components
DROP_IN = Kind("drop-in")  # a node path of the form UNIT.d/NAME.conf
FILE = Kind("file")  # a file the tool reads, relative to the profile
PEM = Kind("pem")  # PEM text
ENV_NAME = Kind("env-name")  # the name of a container's environment variable
ENV_NAMES = Kind("env-names")  # a list of them
VARIABLE = Kind("variable")  # a variable of the tool's environment, which must be set
TIMESTAMP = Kind("timestamp")  # an RFC 3339 time in UTC, as Kubernetes writes one
JSONPATH = Kind("jsonpath")  # one place in an object (spec.targets; parsed by _targets)


def choice(*values: str) -> Kind:
    """One of ``values``."""
    return Kind("choice", values)


def const(value: str) -> Kind:
    """Exactly ``value`` (apiVersion, kind)."""
    return Kind("const", (value,))


def presets(*names: str) -> Kind:
    """A list of NO_PROXY preset names."""
    return Kind("presets", names)


def addresses(*kinds: str) -> Kind:
    """A list or a comma-separated string of NO_PROXY-style entries of ``kinds``
    ("cidr", "ip", "domain"), without ports."""
    return Kind("addresses", kinds)


def object_name(limit: int | None = None) -> Kind:
    """A Kubernetes object name (DNS subdomain), at most ``limit`` characters."""
    return Kind("object-name", limit=limit)


def _with_fields(name: str, fields: Fields) -> Kind:
    if isinstance(fields, Section):
        return Kind(name, section=fields)
    return Kind(name, later=fields)


def mapping(fields: Fields) -> Kind:
    return _with_fields("mapping", fields)


def mappings(fields: Fields) -> Kind:
    """A list of mappings."""
    return _with_fields("mappings", fields)


def rule_list(fields: Fields) -> Kind:
    """One mapping, or a list of them."""
    return _with_fields("rules", fields)


def setters(*values: str) -> Kind:
    """JSONPath -> one of ``values`` (spec.targets[].set)."""
    return Kind("setters", values)
