"""Struct classes behave as the dataclasses they replace."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from proxy_postrender.structs import (
    FrozenInstanceError,
    FrozenStruct,
    Struct,
    StructBase,
    StructMeta,
    field,
    replace,
)


class Point(FrozenStruct):
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


class Bag(Struct):
    name: str
    items: list[int] = field(default_factory=list)


class Labelled(Point):
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


def test_frozen_is_inherited_and_class_keywords_are_refused() -> None:
    # mypyc drops a class statement's keywords: `frozen=True` would silently make a
    # mutable, unhashable record in the compiled build, so no build accepts it
    labelled = Labelled(1)
    with pytest.raises(FrozenInstanceError):
        labelled.label = "x"  # type: ignore[misc]
    assert hash(labelled) == hash(Labelled(1))
    with pytest.raises(TypeError, match="FrozenStruct"):

        class Keyworded(Struct, frozen=True):
            a: int


def test_a_class_variable_is_refused() -> None:
    # compiled, annotations are type objects: a ClassVar would read as a field
    namespace = {"__annotations__": {"a": "ClassVar[int]"}, "a": 1, "__module__": __name__}
    with pytest.raises(TypeError, match="ClassVar"):
        StructMeta("WithClassVar", (Struct,), namespace)


def test_every_record_class_of_the_package_is_built_as_declared() -> None:
    """In the running build (pure or compiled): records read their fields, frozen ones
    hash, mutable ones do not."""
    import importlib
    import pkgutil

    import proxy_postrender

    for info in pkgutil.walk_packages(proxy_postrender.__path__, "proxy_postrender."):
        if info.name.endswith("__main__"):
            continue
        importlib.import_module(info.name)
    seen = 0
    stack: list[type[StructBase]] = list(StructBase.__subclasses__())
    while stack:
        cls = stack.pop()
        stack += cls.__subclasses__()
        if not cls.__module__.startswith("proxy_postrender.") or cls in (Struct, FrozenStruct):
            continue
        seen += 1
        assert cls._fields, cls
        frozen = issubclass(cls, FrozenStruct)
        assert issubclass(cls, Struct) is not frozen, cls
        assert (cls.__hash__ is not None) is frozen, cls
    assert seen >= 40


def test_the_operation_classes_have_no_subclasses() -> None:
    # the splicer, its check and ops.apply tell operations apart by ``type(op) is C``: a
    # subclass would be taken for none of them
    from proxy_postrender.yamltext import ops

    assert [cls for cls in ops.OP_CLASSES if cls.__subclasses__()] == []
    assert set(ops.OP_CLASSES) == set(ops.Op.__args__)


def test_records_with_an_init_of_their_own_are_made_as_the_shared_one_makes_them() -> None:
    # splice.Edit and ops.AddKey set their fields themselves (a compiled __init__, in the
    # compiled build): the same fields, values and order as StructBase.__init__ sets
    from proxy_postrender.yamltext import ops, splice

    cases: list[tuple[type[StructBase], tuple[Any, ...]]] = [
        (splice.Edit, (1, 2, "x")),
        (ops.AddKey, (("spec", 0), "env", "value")),
    ]
    for cls, args in cases:
        assert "__init__" in vars(cls)
        shared = cls.__new__(cls)
        StructBase.__init__(shared, *args)
        for made in (cls(*args), cls(**dict(zip(cls._fields, args, strict=True)))):
            assert list(made.__dict__.items()) == list(shared.__dict__.items())
            assert made == shared and hash(made) == hash(shared) and repr(made) == repr(shared)
        with pytest.raises(FrozenInstanceError):
            cls(*args).start = 0  # type: ignore[attr-defined]
