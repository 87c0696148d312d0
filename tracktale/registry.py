"""One generic registry: name -> object, with entries imported only when first asked for.

Every pluggable thing in tracktale (paradigms, their human studies, model backends, model tasks,
report sections) is kept in a :class:`Registry`, in the style of lm-evaluation-harness's: an
entry is registered either as the object itself (:meth:`Registry.register` as a decorator or a
call, :meth:`Registry.add`) or as a lazy ``"module:attribute"`` reference, which is imported on
the first :meth:`Registry.get` and kept. So listing the names (a command line's choices, a
plan's check) never imports a backend's torch or a paradigm's generator.

An unknown name raises :class:`UnknownName`, a :class:`~tracktale.errors.TracktaleError` that
lists the known names, so the command line prints it as its one-line error.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, cast

from tracktale.errors import TracktaleError

T = TypeVar("T")
D = TypeVar("D")


class UnknownName(TracktaleError):
    """A name that is not registered; the message lists the registered ones.

    Attributes:
        kind: What the registry holds (``paradigm``, ``backend``, ...).
        name: The name asked for.
        known: The registered names, in registration order.
    """

    def __init__(self, message: str, kind: str, name: str, known: tuple[str, ...]) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name
        self.known = known


class _Lazy:
    """A ``module:attribute`` reference not imported yet."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        if ":" not in path:
            raise ValueError(f"a lazy registry entry is 'module:attribute', got {path!r}")
        self.path = path


class Registry(Generic[T]):
    """Names -> objects of one kind, in registration order; lazy entries resolve on first use.

    Args:
        kind: What an entry is, for messages (``"paradigm"``: "unknown paradigm 'x' ...").
        unknown: The message of :class:`UnknownName`, formatted with ``kind``, ``name`` (the
            name asked for, as ``repr``) and ``known`` (the registered names joined by
            ``", "``); by default "unknown <kind> '<name>' (choose from <known>)".
    """

    def __init__(
        self, kind: str, unknown: str = "unknown {kind} {name} (choose from {known})"
    ) -> None:
        self.kind = kind
        self._unknown = unknown
        self._entries: dict[str, object] = {}

    def add(self, name: str, entry: T | str, *, lazy: bool | None = None) -> None:
        """Register ``entry`` as ``name`` (replacing an entry of that name, in its place).

        Args:
            name: The name callers ask for.
            entry: The object, or a ``"module:attribute"`` reference to it.
            lazy: Whether a string ``entry`` is a reference (default: every string is); pass
                ``False`` for a registry whose objects are strings.
        """
        is_reference = isinstance(entry, str) if lazy is None else lazy
        self._entries[name] = _Lazy(cast(str, entry)) if is_reference else entry

    def register(self, name: str) -> Callable[[D], D]:
        """A decorator registering what it decorates as ``name`` (and returning it unchanged)."""

        def decorate(obj: D) -> D:
            self.add(name, cast(T, obj), lazy=False)
            return obj

        return decorate

    def remove(self, name: str) -> None:
        """Drop ``name`` (a test's temporary entry); no error if it is not there."""
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        """The object registered as ``name``, imported now if it was a lazy reference.

        Raises:
            UnknownName: If nothing is registered as ``name``.
        """
        try:
            entry = self._entries[name]
        except KeyError:
            raise self.unknown(name) from None
        if isinstance(entry, _Lazy):
            entry = pkgutil.resolve_name(entry.path)
            self._entries[name] = entry
        return cast(T, entry)

    def unknown(self, name: str) -> UnknownName:
        """The error for an unregistered ``name`` (raised by :meth:`get`)."""
        known = self.names()
        message = self._unknown.format(kind=self.kind, name=repr(name), known=", ".join(known))
        return UnknownName(message, self.kind, name, known)

    def is_loaded(self, name: str) -> bool:
        """Whether ``name``'s entry is imported already (``False`` for a pending reference)."""
        return name in self._entries and not isinstance(self._entries[name], _Lazy)

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._entries)

    def items(self) -> Iterator[tuple[str, T]]:
        """Every ``(name, object)``, in registration order (importing the lazy ones)."""
        for name in self.names():
            yield name, self.get(name)

    def values(self) -> Iterator[T]:
        """Every object, in registration order (importing the lazy ones)."""
        for _, value in self.items():
            yield value

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._entries)})"
