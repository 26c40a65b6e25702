"""Struct classes behave as the dataclasses they replace."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from proxy_postrender.structs import FrozenInstanceError, Struct, field, replace


class Point(Struct, frozen=True):
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


class Bag(Struct):
    name: str
    items: list[int] = field(default_factory=list)


class Labelled(Point, frozen=True):
    label: str = ""


@dataclasses.dataclass(frozen=True)
class DataPoint:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


def test_construction_defaults_and_repr_match_a_dataclass() -> None:
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1,), {}),
        ((1, 2), {}),
        ((), {"x": 3, "tags": ("a",)}),
    ]
    for args, kwargs in cases:
        ours, theirs = Point(*args, **kwargs), DataPoint(*args, **kwargs)
        assert (ours.x, ours.y, ours.tags) == (theirs.x, theirs.y, theirs.tags)
        assert repr(ours) == repr(theirs).replace("DataPoint", "Point")


def test_equality_is_by_class_and_fields_and_frozen_ones_hash() -> None:
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(2, 1)
    assert Point(1) != Labelled(1)
    assert len({Point(1), Point(1), Point(2)}) == 2
    with pytest.raises(TypeError):
        hash(Bag("b"))  # mutable: unhashable, as a dataclass with eq


def test_frozen_fields_cannot_be_assigned() -> None:
    point = Point(1)
    with pytest.raises(FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    bag = Bag("b")
    bag.name = "c"
    assert bag.name == "c"


def test_factories_make_a_new_default_per_instance() -> None:
    first, second = Bag("a"), Bag("b")
    first.items.append(1)
    assert second.items == []


def test_subclasses_add_fields_after_their_bases() -> None:
    assert Labelled(1, 2, (), "l") == Labelled(x=1, y=2, label="l")
    assert repr(Labelled(1)) == "Labelled(x=1, y=0, tags=(), label='')"


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((1, 2, (), 4), {}), ((1,), {"x": 1}), ((1,), {"z": 1})],
)
def test_wrong_arguments_are_type_errors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        Point(*args, **kwargs)


def test_a_field_without_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError):

        class Bad(Struct):
            a: int = 0
            b: int  # type: ignore[misc]


def test_replace_changes_only_the_named_fields() -> None:
    assert replace(Point(1, 2, ("t",)), y=5) == Point(1, 5, ("t",))
    with pytest.raises(TypeError):
        replace(Point(1), z=1)
