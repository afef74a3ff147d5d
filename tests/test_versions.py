"""Env versions (whist_env.versions): ids built from one table, retired versions refused (docs/versioning.md)."""

from __future__ import annotations

import warnings

import gymnasium
import pettingzoo
import pytest
from registry_helpers import set_version

import whist_env
from whist_env import versions
from whist_env.wrappers import gymnasium_id, register_gymnasium_envs, register_pettingzoo_envs


def test_package_version_has_one_source() -> None:
    from whist_env._version import __version__

    assert whist_env.__version__ == __version__
    assert [int(part) for part in __version__.split(".")] >= [0, 1, 0]


def test_ids_are_built_from_the_version_table() -> None:
    assert set(versions.ENV_VERSIONS) == set(whist_env.GAMES)
    assert versions.env_id("classic_whist") == "whist/classic_whist-v0"
    assert versions.gymnasium_id("bid_whist") == "whist_env/BidWhist-v0" == gymnasium_id("bid_whist")
    for game, module in whist_env.GAMES.items():
        assert module.__name__ == f"whist_env.{versions.module_name(game)}"
        assert module.raw_env().metadata["name"] == versions.module_name(game)
        assert pettingzoo.make("aec", versions.env_id(game)).metadata["name"] == versions.module_name(game)
        assert versions.gymnasium_id(game) in gymnasium.registry
        versions.check_version(game, versions.env_version(game))


def test_unknown_game_and_version_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown game 'whisst'"):
        versions.env_id("whisst")
    with pytest.raises(ValueError, match=r"whist/classic_whist-v7 does not exist: the current version is whist/classic_whist-v0"):
        versions.check_version("classic_whist", 7)


@pytest.fixture
def classic_bumped(monkeypatch: pytest.MonkeyPatch):
    """Classic Whist as if 0.2.0 had bumped it to -v1 and retired -v0; both registries restored after."""
    set_version(monkeypatch, "classic_whist", 1, retired={0: "0.2.0"})
    from pettingzoo.env_registry.registration import aec_registry

    saved_aec, saved_gym = dict(aec_registry), dict(gymnasium.registry)
    gymnasium.registry.pop("whist_env/ClassicWhist-v0")  # after a real bump it is never registered as current
    yield
    for registry, saved in ((aec_registry, saved_aec), (gymnasium.registry, saved_gym)):
        registry.clear()
        registry.update(saved)


RETIRED_MESSAGE = r"whist/classic_whist-v0 was retired in 0\.2\.0: use whist/classic_whist-v1 \(CHANGELOG\.md\)"


def test_retired_version_is_refused_naming_the_new_id(classic_bumped) -> None:
    with pytest.raises(ValueError, match=RETIRED_MESSAGE):
        versions.check_version("classic_whist", 0)
    versions.check_version("classic_whist", 1)
    assert versions.retired_versions("classic_whist") == [0]
    assert versions.env_id("classic_whist") == "whist/classic_whist-v1"


def test_registries_refuse_a_retired_id(classic_bumped) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns that the -v0 entry is overridden
        assert register_pettingzoo_envs(["classic_whist"]) == ["whist/classic_whist-v1"]
        assert register_gymnasium_envs(["classic_whist"]) == ["whist_env/ClassicWhist-v1"]
    with pytest.raises(ValueError, match=RETIRED_MESSAGE):
        pettingzoo.make("aec", "whist/classic_whist-v0")
    gymnasium_message = r"whist_env/ClassicWhist-v0 was retired in 0\.2\.0: use whist_env/ClassicWhist-v1 \(CHANGELOG\.md\)"
    with pytest.raises(ValueError, match=gymnasium_message), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Gymnasium's own "out of date, consider v1" comes first
        gymnasium.make("whist_env/ClassicWhist-v0")
