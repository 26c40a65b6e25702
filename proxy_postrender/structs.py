"""Struct classes: what ``@dataclass`` gives this package, without its start-up cost.

``dataclasses`` writes and compiles the methods of every class when its module
is imported: about 1 ms per class here, half of the tool's start-up. A
:class:`Struct` subclass gets the same behaviour from methods defined once:
fields from the class annotations in order (base classes first), defaults from
class attributes or :func:`field`, keyword or positional construction, field
equality, a ``Name(field=value, ...)`` repr, and with ``frozen=True`` no
assignment after construction and a hash. :func:`replace` is
``dataclasses.replace``. Type checkers read the classes as dataclasses
(``dataclass_transform``).
"""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, TypeVar, dataclass_transform

    S = TypeVar("S", bound="Struct")
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


@dataclass_transform(field_specifiers=(field,))
class Struct:
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, *, frozen: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = list(cls._fields)
        defaults = dict(cls._defaults)
        # the class's own annotations (inspect.get_annotations would import inspect)
        own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
        for name, annotation in own.items():
            if str(annotation).startswith("ClassVar"):
                continue
            if name not in names:
                names.append(name)
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
                if isinstance(defaults[name], _Factory):
                    delattr(cls, name)
            elif defaults and name not in defaults:
                raise TypeError(f"{cls.__name__}: field {name} without a default follows one with")
        cls._fields = tuple(names)
        cls._defaults = defaults
        if frozen:
            cls.__setattr__ = _frozen_setattr  # type: ignore[method-assign,assignment]
            cls.__delattr__ = _frozen_delattr  # type: ignore[method-assign,assignment]
            cls.__hash__ = _hash  # type: ignore[method-assign,assignment]
        else:
            cls.__hash__ = None  # type: ignore[assignment]  # as a mutable dataclass

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} arguments")
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in fields or name in values:
                raise TypeError(f"{type(self).__name__}: unexpected or repeated argument {name}")
            values[name] = value
        if len(values) < len(fields):
            for name in fields:
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
        assert isinstance(other, Struct)
        return self._values() == other._values()

    def __repr__(self) -> str:
        found = self.__dict__
        inner = ", ".join(f"{name}={found[name]!r}" for name in self._fields)
        return f"{type(self).__qualname__}({inner})"


def _frozen_setattr(self: Struct, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Struct, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _hash(self: Struct) -> int:
    return hash(self._values())


def replace(record: S, **changes: Any) -> S:
    """A copy of ``record`` with some fields changed (``dataclasses.replace``)."""
    values = {name: record.__dict__[name] for name in record._fields}
    for name in changes:
        if name not in values:
            raise TypeError(f"{type(record).__name__} has no field {name}")
    values.update(changes)
    return type(record)(**values)
