"""A read-only mapping that can be copied and pickled (``types.MappingProxyType`` cannot)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class ReadOnlyMapping(Mapping):
    """A read-only view of a dict: item access, iteration, ``len``, ``==`` with any mapping;
    item assignment raises ``TypeError``. Unlike ``MappingProxyType`` it survives ``pickle`` and
    ``copy.deepcopy`` (so do the environments and information states that hold one).

    Args:
        data: the mapping to expose; it is copied (shallowly), so later changes to it do not show.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_data", dict(data or {}))

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._data,))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"
