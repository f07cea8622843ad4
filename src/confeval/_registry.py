"""The one name -> implementation table of the package.

Every table that turns a name a user typed (a suite, an interval method, a set score, a
measure, a built-in task, a taxonomy, a section kind, ...) into code is a :class:`Registry`:
filled by a literal or by the :meth:`Registry.register` decorator, looked up by indexing, and an
unknown name is one :class:`UnknownName` error listing the choices, never a silent default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

__all__ = ["Registry", "UnknownName"]

T = TypeVar("T")


class UnknownName(ValueError, KeyError):
    """A name that is not in a registry. A ``ValueError`` (a bad argument value) and a
    ``KeyError`` (a failed lookup), so callers may catch either."""

    def __str__(self) -> str:          # KeyError would show the message quoted
        return str(self.args[0])


class Registry(Mapping[str, T], Generic[T]):
    """Name -> implementation, in the order registered.

    Examples
    --------
    >>> shapes = Registry("shape", {"square": 4})
    >>> @shapes.register("triangle")
    ... def three():
    ...     return 3
    >>> shapes["square"], list(shapes)
    (4, ['square', 'triangle'])
    >>> shapes["circle"]
    Traceback (most recent call last):
    ...
    confeval._registry.UnknownName: unknown shape 'circle'; choose from square, triangle
    """

    def __init__(self, what: str, entries: Mapping[str, T] | None = None, *,
                 fill: Callable[[], object] | None = None) -> None:
        self.what = what
        self._entries: dict[str, T] = dict(entries or {})
        # what registers the entries (e.g. importing the report sections): called at the
        # first lookup, so that naming the registry costs nothing
        self._fill_with = fill

    def fill_with(self, fill: Callable[[], object]) -> None:
        """What registers the entries, called at the first lookup (set by a package whose
        modules register into this registry, so that the registry need not import them)."""
        self._fill_with = fill

    def _fill(self) -> None:
        if self._fill_with is not None:
            fill, self._fill_with = self._fill_with, None
            fill()

    def __getitem__(self, name: str) -> T:
        self._fill()
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise UnknownName(f"unknown {self.what} {name!r}; choose from "
                              f"{', '.join(self._entries)}") from None

    def __iter__(self) -> Iterator[str]:
        self._fill()
        return iter(self._entries)

    def __len__(self) -> int:
        self._fill()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {list(self._entries)})"

    def add(self, name: str, value: T) -> T:
        """Register ``value`` under ``name``; a name is registered once."""
        if name in self._entries:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self._entries[name] = value
        return value

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""
        return lambda value: self.add(name, value)
