"""The block reader's caches of lines and flow collections (issue 33, target 3): a line
or a flow collection read before gives what reading it again gives (nodes at the new
place, data of its own), within the nesting bound of where it is read, and the caches
keep to their bounds."""

from __future__ import annotations

import pytest

from proxy_postrender.yamltext import blockread, tree
from proxy_postrender.yamltext.errors import MAX_DEPTH
from tests.test_blockread import check_segment

FLOW = "{name: http, containerPort: 8080, tags: [a, {b: c}]}"


@pytest.fixture(autouse=True)
def _empty_caches() -> None:
    blockread._LINES.clear()
    blockread._FLOWS.clear()


def _nested(levels: int, value: str) -> str:
    """A document whose innermost key (``levels`` mappings deep) holds ``value``."""
    text = "".join(" " * i + f"k{i}:\n" for i in range(levels - 1))
    return text + " " * (levels - 1) + f"z: {value}\n"


def test_a_flow_collection_read_again_is_read_as_libyaml_reads_it_at_its_new_place() -> None:
    first = f"a:\n  - {FLOW}\n"
    second = f"kind: X\nmetadata:\n  name: n\nb:\n    - x\n    - {FLOW}  # c\nc: {FLOW}\n"
    assert check_segment(first)
    assert FLOW in blockread._FLOWS
    assert check_segment(second)  # nodes and data as libyaml gives them, from the cache


def test_a_flow_collection_read_again_has_data_of_its_own() -> None:
    text = f"a: {FLOW}\nb:\n  - {FLOW}\n"
    _, data = blockread.read(text)
    _, again = blockread.read(text)
    nested = [data["a"], data["b"][0], again["a"], again["b"][0]]
    for i, one in enumerate(nested):
        for other in nested[i + 1 :]:
            assert one is not other and one["tags"] is not other["tags"]
            assert one["tags"][1] is not other["tags"][1]
    data["a"]["tags"].append("changed")  # as the planners' operations change data
    data["b"][0]["name"] = "changed"
    _, third = blockread.read(text)
    assert third == again
    assert third["a"]["tags"] == ["a", {"b": "c"}] and third["b"][0]["name"] == "http"


def test_a_flow_collection_read_before_is_declined_past_the_nesting_bound() -> None:
    # "z: {..[..{..}]}" three collections deep: at the bound when its mapping is the
    # MAX_DEPTH - 3rd level (the root counts as one), past it one level deeper
    fits = _nested(MAX_DEPTH - 3, FLOW)
    deeper = _nested(MAX_DEPTH - 2, FLOW)
    blockread.read(fits)
    assert FLOW in blockread._FLOWS
    with pytest.raises(blockread.Declined) as declined:
        blockread.read(deeper)
    assert declined.value.reason == "nested too deeply"
    blockread._FLOWS.clear()
    with pytest.raises(blockread.Declined) as without:
        blockread.read(deeper)
    assert without.value.reason == declined.value.reason


def test_a_line_read_before_keeps_its_offsets_in_a_new_document() -> None:
    lines = ['image: "registry.example.com/app:1"', "replicas: 2", "name: 'q'  # c", "e:"]
    assert check_segment("".join(line + "\n" for line in lines[:3]) + "e:\n  x: 1\n")
    assert set(lines) <= set(blockread._LINES)
    # the same lines elsewhere: deeper, as sequence items, after other text
    text = "top: 1\nlist:\n  - " + "\n    ".join(lines[:3]) + "\n    e:\n      - y\n"
    assert check_segment(text)
    node, _ = blockread.read(text)
    assert isinstance(node, tree.MappingNode)


def test_the_caches_keep_to_their_bounds() -> None:
    long_value = "v" * blockread._MAX_LINE
    blockread.read(f"k: {long_value}\nf: [{long_value}]\n")
    assert not blockread._LINES.keys() & {f"k: {long_value}"}
    assert not blockread._FLOWS
    for n in range(blockread._MAX_LINES + 10):
        blockread.read(f"k{n}: [{n}]\n")
    assert len(blockread._LINES) <= blockread._MAX_LINES
    assert len(blockread._FLOWS) <= blockread._MAX_FLOWS
