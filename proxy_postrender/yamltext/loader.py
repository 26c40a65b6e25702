"""The safe loader every reader resolves and constructs scalars with: libyaml's C
parser with ruamel.yaml's safe constructor, read by :mod:`libyaml` for whole documents
and by :mod:`blockread` for the plain scalars it does not resolve itself."""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.cyaml import CSafeLoader
from ruamel.yaml.nodes import MappingNode, Node, SequenceNode


class Loader(CSafeLoader):
    """A safe loader that reads unknown tags (``!Ref``) as plain data instead of failing."""

    def construct_yaml_float(self, node: Any) -> float:
        # ruamel.yaml warns on stderr, quoting the input, about a YAML 1.1 float whose
        # mantissa has no dot ("1e3"), and builds the warning from the node's marks
        # (which the block reader's scalars lack): the same float, without either
        text = str(self.construct_scalar(node)).replace("_", "").lower()
        mantissa, exponent, _ = text.partition("e")
        if exponent and "." not in mantissa and ":" not in text:
            return float(text)
        result: float = super().construct_yaml_float(node)
        return result


def _construct_unknown(loader: SafeConstructor, node: Node) -> Any:
    if isinstance(node, MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


Loader.add_constructor(None, _construct_unknown)
Loader.add_constructor("tag:yaml.org,2002:float", Loader.construct_yaml_float)


def scalar_loader() -> Any:
    """A loader whose resolver and constructors turn plain scalars into data exactly
    as :func:`libyaml.compose` does (for the fast block reader)."""
    return Loader("")
