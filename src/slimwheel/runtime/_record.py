"""Frozen records and named choices without ``dataclasses`` and ``enum``.

A package imports the loader at its own import time, in every process. ``dataclasses`` pulls in
``inspect`` (and with it ``ast``, ``dis``, ``tokenize``), and ``enum`` pulls in ``functools`` and
``collections``: together about 10 ms on a small machine, more than the loader's whole budget. These
two small bases give what the loader used of them: immutable slotted records compared, hashed and
printed by their fields, with ``replace``; and string constants that are their own value.
"""

from __future__ import annotations

__all__ = ["Choice", "Record"]

# mypy treats a module-level TYPE_CHECKING as true; importing typing would cost the loader's start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar, TypeVar

    _R = TypeVar("_R", bound="Record")
    _C = TypeVar("_C", bound="Choice")


class Record:
    """Fields are the subclass's ``__slots__``; its ``__init__`` sets them through ``_set``."""

    __slots__: tuple[str, ...] = ()

    def _set(self, **values: object) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: use .replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._fields()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def to_dict(self) -> dict[str, object]:
        """Fields by name, for JSON reports (a subclass may give them in a reading order)."""
        return {name: getattr(self, name) for name in self.__slots__}

    def replace(self: _R, **changes: object) -> _R:
        """A copy with some fields changed (``copy.replace`` calls this too, on Python 3.13+)."""
        values = {name: getattr(self, name) for name in self.__slots__}
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        values.update(changes)
        return type(self)(**values)

    __replace__ = replace

    def __reduce__(self) -> tuple[object, ...]:
        # pickle and copy would restore slots through __setattr__, which refuses.
        return _restore, (type(self), self._values())

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)


def _restore(cls: type[_R], values: tuple[object, ...]) -> _R:
    record = cls.__new__(cls)
    for index, name in enumerate(cls.__slots__):  # not zip(strict=): an embedded copy runs on 3.8 too
        object.__setattr__(record, name, values[index])
    return record


class Choice(str):
    """One of a fixed set of named string values: ``Policy("wheel-first") is Policy.WHEEL_FIRST``.

    It compares equal to its value and prints as it, so JSON and messages need no ``.value``; ``.value``
    and ``.name`` are there for code written against an enum.
    """

    __slots__ = ()
    _members: ClassVar[dict[str, Choice]]
    _names: ClassVar[dict[str, str]]

    def __new__(cls: type[_C], value: str) -> _C:
        member = cls._members.get(value)
        if member is None:
            choices = ", ".join(repr(v) for v in cls._members)
            raise ValueError(f"{value!r} is not a valid {cls.__name__} (one of {choices})")
        assert isinstance(member, cls)
        return member

    @classmethod
    def _define(cls: type[_C], name: str, value: str) -> _C:
        if "_members" not in cls.__dict__:
            cls._members, cls._names = {}, {}
        member = str.__new__(cls, value)
        cls._members[value] = member
        cls._names[value] = name
        setattr(cls, name, member)
        return member

    @classmethod
    def members(cls: type[_C]) -> tuple[_C, ...]:
        return tuple(cls(value) for value in cls._members)

    @property
    def value(self) -> str:
        return str.__str__(self)

    @property
    def name(self) -> str:
        return self._names[str.__str__(self)]

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}: {str.__repr__(self)}>"

    def __reduce__(self) -> tuple[type[Choice], tuple[str]]:
        return type(self), (str.__str__(self),)
