"""The version of each game's environment, and the ids built from it (docs/versioning.md).

Any change to a game's observation, actions, rewards, rules or defaults bumps that game's entry in
:data:`ENV_VERSIONS` (``-v0`` → ``-v1``) and is recorded in CHANGELOG.md. The old version is not
kept (one code path per game): it moves to :data:`RETIRED` and every id of it is refused with a
message naming the new one. The golden playthroughs in ``tests/golden/`` pin the current version of
each env (re-record them with ``python -m tests.golden.record`` after a deliberate change).

The versions are the descriptors' (:mod:`whist_env.games`): a bump is a new ``version`` in the game's
``GameSpec`` and the old one added to its ``retired``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from whist_env import games

#: Game name -> the version of its environment (the ``N`` of ``whist/<game>-vN``), read from each
#: game's descriptor (``GameSpec.version``; a live, read-only view of :mod:`whist_env.games`).
ENV_VERSIONS: Mapping[str, int] = games.view(lambda spec: spec.version)


class _Retired(Mapping):
    """``(game name, retired env version) -> the package version whose release retired it``, read
    from the descriptors' ``retired`` (live, read-only)."""

    def _items(self) -> dict[tuple[str, int], str]:
        return {(s.name, v): release for s in games.specs() for v, release in s.retired.items()}

    def __getitem__(self, key: tuple[str, int]) -> str:
        return self._items()[key]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())


#: (game name, retired env version) -> the package version (``whist_env.__version__``) whose
#: release retired it: each descriptor's ``retired`` (empty until a first bump).
RETIRED: Mapping[tuple[str, int], str] = _Retired()


def _known(game: str) -> int:
    return games.spec(game).version


def env_version(game: str) -> int:
    """The current version (an int, 0 for ``-v0``) of ``game``'s environment.

    Raises:
        ValueError: ``game`` is not a registered game.
    """
    return _known(game)


def env_id(game: str, version: int | None = None) -> str:
    """PettingZoo registry id of ``game``: ``"classic_whist"`` → ``"whist/classic_whist-v0"``.

    ``version`` defaults to the current one; any other is only spelled, not checked (see
    :func:`check_version`).
    """
    return f"whist/{game}-v{_known(game) if version is None else version}"


def module_name(game: str) -> str:
    """Name of ``game``'s env module and its ``metadata["name"]``: ``"classic_whist_v0"``."""
    return f"{game}_v{_known(game)}"


def gymnasium_id(game: str, version: int | None = None) -> str:
    """Gymnasium id of ``game``'s single-agent env: ``"classic_whist"`` → ``"whist_env/ClassicWhist-v0"``."""
    camel = "".join(part.capitalize() for part in game.split("_"))
    return f"whist_env/{camel}-v{_known(game) if version is None else version}"


def check_version(game: str, version: int, spell: Callable[[str, int | None], str] = env_id) -> None:
    """Accept ``version`` of ``game`` only if it is the current one.

    Args:
        game, version: the game name and the env version asked for.
        spell: how the message writes an id: :func:`env_id` (PettingZoo's) or :func:`gymnasium_id`.
    Raises:
        ValueError: the game is unknown; the version was retired (the message names the
            release that retired it and the id to use instead); or the version never existed.
    """
    current = _known(game)
    if version == current:
        return
    if (game, version) in RETIRED:
        raise ValueError(f"{spell(game, version)} was retired in {RETIRED[game, version]}: use {spell(game, None)} (CHANGELOG.md)")
    raise ValueError(f"{spell(game, version)} does not exist: the current version is {spell(game, None)}")


def refuse_retired(game: str, version: int, registry: str = "pettingzoo", **options: object) -> None:
    """Registry entry point of a retired id: raises the :func:`check_version` refusal.

    Registered (``functools.partial(refuse_retired, game, version, registry=...)``) under each
    retired id, so ``pettingzoo.make`` and ``gymnasium.make`` answer with the id to use instead of
    "not found", spelled as that registry spells it.

    Args:
        registry: ``"pettingzoo"`` or ``"gymnasium"``: whose ids the message names.
    Raises:
        ValueError: always, for a retired version (what :func:`check_version` raises).
    """
    spell = gymnasium_id if registry == "gymnasium" else env_id
    check_version(game, version, spell)
    raise ValueError(f"{spell(game, version)} is not retired: register it with its env")


def retired_versions(game: str) -> list[int]:
    """The retired versions of ``game``, oldest first (registered only to be refused)."""
    _known(game)
    return sorted(v for g, v in RETIRED if g == game)


__all__ = [
    "ENV_VERSIONS",
    "RETIRED",
    "check_version",
    "env_id",
    "env_version",
    "gymnasium_id",
    "module_name",
    "refuse_retired",
    "retired_versions",
]
