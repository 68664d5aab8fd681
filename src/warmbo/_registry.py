"""One registry pattern for the named parts of warmbo: benchmark sections, reproductions, transfer
methods and the demo's panels.

A :class:`Registry` is an ordered, read-mostly mapping ``name -> entry`` with one way in
(:meth:`Registry.register`, which refuses a name twice) and one way to look a name up with an
error that lists the choices (:meth:`Registry.lookup`). ``warmbo bench``, ``warmbo reproduce``,
``Optimizer(transfer=...)`` and ``warmbo demo`` each declare their parts in one such registry, so
adding a part touches the registry and the part's own module, never the command that runs it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Named entries of one ``kind`` (used in messages), in registration order."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T) -> T:
        """Add ``entry`` under ``name``; a name may be registered once. Returns the entry."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.kind} needs a non-empty name, got {name!r}")
        if name in self._entries:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._entries[name] = entry
        return entry

    def lookup(self, name: str) -> T:
        """The entry ``name``; a ValueError naming the choices for an unknown one."""
        if name not in self._entries:
            raise ValueError(self.unknown(name))
        return self._entries[name]

    def unknown(self, name, said: str | None = None) -> str:
        """Why ``name`` is refused: ``unknown <said or kind> 'name'``, the registered name it looks
        like (another case, a typo: ``rgbe`` for ``rgpe``), and the choices."""
        import difflib

        text = str(name)
        close = [n for n in self._entries if n.lower() == text.lower()] or difflib.get_close_matches(
            text.lower(), list(self._entries), n=1, cutoff=0.75
        )
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown {said or self.kind} {name!r}{hint}; choose one of {', '.join(self._entries)}"

    def pop(self, name: str, default=None):
        """Remove ``name`` (for tests that register a probe entry)."""
        return self._entries.pop(name, default)

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"
