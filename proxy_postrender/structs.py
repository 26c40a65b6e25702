"""Struct classes: what ``@dataclass`` gives this package, without its start-up cost.

``dataclasses`` writes and compiles the methods of every class when its module
is imported: about 1 ms per class here, half of the tool's start-up. A
:class:`Struct` subclass gets the same behaviour from methods defined once:
fields from the class annotations in order (base classes first), defaults from
class attributes or :func:`field`, keyword or positional construction, field
equality and a ``Name(field=value, ...)`` repr. A :class:`FrozenStruct` subclass
is also frozen (no assignment after construction) and hashable. :func:`replace`
is ``dataclasses.replace``. Type checkers read the classes as dataclasses
(``dataclass_transform``).

The compiled build (mypyc, docs/compiled.md) sets two rules, which hold in both
builds so that the pure build's tests catch a break:

- **Frozen is a base class, never a class keyword.** mypyc builds a class from
  its name, bases and namespace only: ``class C(Struct, frozen=True)`` would
  lose ``frozen`` there and make an unhashable, mutable record. Keywords are
  refused.
- **Records are ordinary Python classes.** The metaclass keeps mypyc from
  making them native classes (which have no ``__dict__`` and no annotations to
  read the fields from). Their methods are still compiled. This module is
  not compiled itself: mypyc cannot compile a subclass of ``type``.

Struct classes declare no ``ClassVar``: compiled, an annotation is a type
object and a class variable would be read as a field.
"""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, TypeVar, dataclass_transform

    S = TypeVar("S", bound="StructBase")
else:

    def dataclass_transform(**_kwargs: object) -> Callable[[type], type]:
        """Only type checkers read it."""
        return lambda cls: cls


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record."""


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], Any]) -> Any:
    """A default made anew for every instance (a list, a dict, another record)."""
    return _Factory(default_factory)


_MISSING = object()


def _frozen_setattr(self: StructBase, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: StructBase, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _hash(self: StructBase) -> int:
    return hash(self._values())


class StructMeta(type):
    """Reads the fields of a record class from its annotations when it is created."""

    _fields: tuple[str, ...]
    _field_set: frozenset[str]
    _defaults: dict[str, Any]

    def __new__(
        mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> StructMeta:
        if kwargs:
            raise TypeError(
                f"{name}: class keywords ({', '.join(kwargs)}) are not supported: a compiled "
                "build drops them; derive from FrozenStruct for a frozen record"
            )
        # the class's own annotations (inspect.get_annotations would import inspect);
        # strings in the pure build (``from __future__ import annotations``), type
        # objects in the compiled one. Checked before the class exists: a refused class
        # must not linger among its bases' subclasses.
        own = namespace.get("__annotations__", {})
        for field_name, annotation in own.items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                raise TypeError(f"{name}: a record class declares no ClassVar ({field_name})")
        cls = super().__new__(mcs, name, bases, namespace)
        names: list[str] = []
        defaults: dict[str, Any] = {}
        for base in reversed(cls.__mro__[1:]):
            if isinstance(base, StructMeta):
                names += [name for name in base._fields if name not in names]
                defaults.update(base._defaults)
        for field_name in own:
            if field_name not in names:
                names.append(field_name)
            if field_name in namespace:
                defaults[field_name] = namespace[field_name]
                if isinstance(defaults[field_name], _Factory):
                    delattr(cls, field_name)
            elif defaults and field_name not in defaults:
                raise TypeError(f"{name}: field {field_name} without a default follows one with")
        cls._fields = tuple(names)
        cls._field_set = frozenset(names)
        cls._defaults = defaults
        # FrozenStruct's own methods and StructBase's ``__hash__ = None`` (it defines
        # __eq__) are inherited: set here only where the class itself changed them (an
        # assignment to a class's special method costs it a slot update: start-up)
        setter: object = cls.__setattr__
        deleter: object = cls.__delattr__
        hasher: object = cls.__hash__
        if getattr(cls, "_frozen_record", False):
            if setter is not _frozen_setattr:
                cls.__setattr__ = _frozen_setattr  # type: ignore[method-assign,assignment]
            if deleter is not _frozen_delattr:
                cls.__delattr__ = _frozen_delattr  # type: ignore[method-assign,assignment]
            if hasher is not _hash:
                cls.__hash__ = _hash  # type: ignore[method-assign,assignment]
        elif hasher is not None:
            cls.__hash__ = None  # type: ignore[assignment]  # as a mutable dataclass
        return cls


class StructBase(metaclass=StructMeta):
    """What :class:`Struct` and :class:`FrozenStruct` share (two bases, not one
    the other's: a frozen dataclass cannot derive from a mutable one)."""

    if TYPE_CHECKING:  # set by the metaclass; not fields
        _fields: ClassVar[tuple[str, ...]]
        _field_set: ClassVar[frozenset[str]]
        _defaults: ClassVar[dict[str, Any]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Interpreted in both builds (this module is not compiled) and run for every
        # record made (edits, operations, plans: a dozen per document): each common call
        # takes the shortest way.
        fields = self._fields
        if not kwargs:  # by position; the fields left out have defaults
            if len(args) == len(fields):
                # a dict first, then merged: the instance's __dict__ then takes its keys
                # as they are (a combined table, which attribute reads in the pure build
                # are faster on than on the shared one that item-by-item updates keep)
                self.__dict__.update(dict(zip(fields, args, strict=True)))
                return
            if len(args) > len(fields):
                raise TypeError(f"{type(self).__name__} takes {len(fields)} arguments")
            values = dict(zip(fields, args, strict=False))
            missing = fields[len(args) :]
        else:
            if args:
                values = dict(zip(fields, args, strict=False))
                values.update(kwargs)
                refused = len(values) < len(args) + len(kwargs)
            else:
                values = kwargs  # a dict of this call's own
                refused = False
            if refused or len(args) > len(fields) or not self._field_set.issuperset(kwargs):
                if len(args) > len(fields):
                    raise TypeError(f"{type(self).__name__} takes {len(fields)} arguments")
                for name in kwargs:
                    if name not in fields or name in fields[: len(args)]:
                        raise TypeError(
                            f"{type(self).__name__}: unexpected or repeated argument {name}"
                        )
            missing = fields if len(values) < len(fields) else ()
        for name in missing:
            if name not in values:
                default = self._defaults.get(name, _MISSING)
                if default is _MISSING:
                    raise TypeError(f"{type(self).__name__}: missing argument {name}")
                values[name] = default.make() if isinstance(default, _Factory) else default
        self.__dict__.update(values)

    def _values(self) -> tuple[Any, ...]:
        found = self.__dict__
        return tuple(found[name] for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, StructBase)
        return self._values() == other._values()

    def __repr__(self) -> str:
        found = self.__dict__
        inner = ", ".join(f"{name}={found[name]!r}" for name in self._fields)
        return f"{type(self).__qualname__}({inner})"


@dataclass_transform(field_specifiers=(field,))
class Struct(StructBase):
    """A mutable record (``@dataclass``): equality by fields, unhashable."""


@dataclass_transform(field_specifiers=(field,), frozen_default=True)
class FrozenStruct(StructBase):
    """A frozen record (``@dataclass(frozen=True)``): no assignment, hashable."""

    _frozen_record = True


def replace(record: S, **changes: Any) -> S:
    """A copy of ``record`` with some fields changed (``dataclasses.replace``)."""
    values = {name: record.__dict__[name] for name in record._fields}
    for name in changes:
        if name not in values:
            raise TypeError(f"{type(record).__name__} has no field {name}")
    values.update(changes)
    return type(record)(**values)
