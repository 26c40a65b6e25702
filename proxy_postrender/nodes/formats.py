"""The bootstrap formats the tool writes node settings for, and a refusal for any other.

A KubeadmConfigSpec's ``format`` (v1beta1 and v1beta2 alike, at the spec's top
level; Cluster API's CRD enum at ae7ff047db: ``cloud-config``, ``ignition``, the
first one when absent) says how its ``files`` and ``preKubeadmCommands`` reach
the node. The tool's systemd drop-ins and shell commands suit both: Cluster API
turns them into cloud-init or Ignition itself (docs/cluster-api.md, "Ignition
(Flatcar)"). Any other value, notably EKS Anywhere's ``bottlerocket`` (its fork
of Cluster API adds it), configures a node with no cloud-init and no systemd
units the tool could write to: the tool refuses the object rather than write
what such a node cannot use. Pure data in, an error out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import InputError

if TYPE_CHECKING:
    from typing import Any

KNOWN = ("cloud-config", "ignition")
# a top-level ``format:`` line of a ClusterClass patch's template value
_FORMAT_LINE = r"(?m)^format\s*:\s*['\"]?([^'\"#\s]*)"


def _advice(value: str) -> str:
    if value == "bottlerocket":
        return (
            "EKS Anywhere takes the nodes' proxy from its own cluster spec "
            "(proxyConfiguration): set it there, and spec.nodes.enabled: false in the "
            "profile for this stream"
        )
    return (
        "configure the nodes' proxy by that format's own means, and set "
        "spec.nodes.enabled: false in the profile for this stream"
    )


def refusal(value: Any, said: str) -> InputError:
    """The one-line error for a format ``value``; ``said`` (``{}`` for the value) names
    where it is."""
    shown = repr(value) if isinstance(value, str) else f"{value!r} (not a string)"
    return InputError(
        f"{said.replace('{}', shown, 1)}: the tool writes node bootstrap only for "
        f"{' and '.join(KNOWN)} (systemd drop-ins and shell commands, which these nodes "
        "cannot use); " + _advice(str(value))
    )


def check(spec: Mapping[str, Any], where: str, path: Sequence[str] = ("format",)) -> None:
    """Refuse a KubeadmConfigSpec (at ``where``) whose ``format`` (at ``path`` under the
    spec: RKE2's is ``agentConfig.format``) the tool does not write for; absent or null
    is ``cloud-config``."""
    value: Any = spec
    for step in path:
        value = value.get(step) if isinstance(value, Mapping) else None
    if value is not None and value not in KNOWN:
        raise refusal(value, f"{where}.{'.'.join(path)} is {{}}")


def check_patch(
    json_patch: Mapping[str, Any], pointer: str, lists: Mapping[str, str], where: str
) -> None:
    """Refuse a ClusterClass patch (at ``where``) that gives the templates it selects a
    format the tool does not write for: at ``<spec>/format``, or as a key of a value that
    replaces the spec (``lists``: the list pointers of the selected templates, under the
    spec)."""
    specs = {list_pointer.rsplit("/", 1)[0] for list_pointer in lists}
    if pointer in {f"{spec}/format" for spec in specs}:
        value = json_patch.get("value")
        if "value" in json_patch and value is not None and value not in KNOWN:
            raise refusal(value, f"ClusterClass patch {where} sets {pointer} to {{}}")
        return
    if pointer not in specs:
        return
    value = json_patch.get("value")
    if isinstance(value, Mapping):
        found_value = value.get("format")
        if found_value is not None and found_value not in KNOWN:
            raise refusal(found_value, f"ClusterClass patch {where} sets {pointer}/format to {{}}")
        return
    template = json_patch.get("valueFrom")
    text = template.get("template") if isinstance(template, Mapping) else None
    if isinstance(text, str):
        found = re.search(_FORMAT_LINE, _dedented(text))
        text_value = found.group(1) if found is not None else ""
        if text_value and not text_value.startswith("{{") and text_value not in KNOWN:
            said = f"ClusterClass patch {where} sets {pointer}/format to {{}} (its template)"
            raise refusal(text_value, said)


def _dedented(text: str) -> str:
    """``text`` with the indentation of its first content line taken off every line."""
    lines = text.splitlines()
    first = next((line for line in lines if line.strip()), "")
    indent = len(first) - len(first.lstrip(" "))
    return "\n".join(line[indent:] for line in lines)
