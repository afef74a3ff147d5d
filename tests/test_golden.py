"""Golden playthroughs: every env replays its recorded episodes exactly (tests/golden/, docs/versioning.md).

Each trace is replayed with its recorded actions; the first difference in the acting agent, the
legal actions, the observation, the rewards, the flags, the infos or the global state fails with
the game, option set, step, field, expected and got values, and what to do about it.
"""

from __future__ import annotations

from typing import Any

import pytest
from golden.record import GOLDEN_DIR, OPTION_SETS, load_trace, make_env, observe_step, trace_path

from whist_env.versions import ENV_VERSIONS, env_id

FIELDS = ("agent", "legal", "obs", "reward", "rewards", "terminations", "truncations", "infos", "state")

CASES = [(game, set_name) for game, sets in OPTION_SETS.items() for set_name in sets]


def first_difference(expected: Any, got: Any, path: str) -> tuple[str, Any, Any] | None:
    """``(path, expected, got)`` at the first place two JSON values differ, ``None`` if equal."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in list(expected) + [k for k in got if k not in expected]:
            if key not in got or key not in expected:
                return f"{path}.{key}", expected.get(key, "<absent>"), got.get(key, "<absent>")
            found = first_difference(expected[key], got[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        for i, (e, g) in enumerate(zip(expected, got)):
            found = first_difference(e, g, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if expected == got else (path, expected, got)


def changed(game: str, set_name: str, where: str, field: str, expected: Any, got: Any) -> str:
    return (
        f"golden playthrough {game} / {set_name} ({trace_path(game, set_name).name}): {where}, field {field!r}: "
        f"expected {expected!r}, got {got!r}. The behaviour of {env_id(game)} changed: if deliberate, bump its "
        "version in whist_env/versions.py, record the change in CHANGELOG.md (docs/versioning.md) and "
        "re-record with python -m tests.golden.record"
    )


def replay(game: str, set_name: str) -> None:
    """Replay one trace, failing at its first difference (module docstring)."""
    trace = load_trace(trace_path(game, set_name))
    if trace["env_id"] != env_id(game):
        pytest.fail(
            f"golden playthrough {game} / {set_name} was recorded for {trace['env_id']} but the env is now "
            f"{env_id(game)}: re-record with python -m tests.golden.record (docs/versioning.md)"
        )
    options = OPTION_SETS[game][set_name]
    for key in ("options", "reset_seed"):
        expected = options if key == "options" else trace[key]
        if trace[key] != expected:
            pytest.fail(f"golden playthrough {game} / {set_name}: the trace's {key} {trace[key]!r} differ from "
                        f"{expected!r} in tests/golden/record.py: re-record with python -m tests.golden.record")
    env = make_env(game, options)
    env.reset(seed=trace["reset_seed"])
    first = env.observe(env.agent_selection)
    for key in ("observation", "action_mask"):
        got = {"dtype": str(first[key].dtype), "shape": list(first[key].shape)}
        if got != trace[key]:
            pytest.fail(changed(game, set_name, "after reset", f"{key} dtype/shape", trace[key], got))
    steps = trace["steps"]
    i = 0
    for _agent in env.agent_iter():
        if i >= len(steps):
            pytest.fail(changed(game, set_name, f"step {i}", "end of episode", f"the episode ends after {len(steps)} steps",
                                f"{env.agent_selection} still to act"))
        record = steps[i]
        now = observe_step(env)
        for field in FIELDS:
            diff = first_difference(record[field], now[field], field)
            if diff:
                where = f"step {i} ({record['agent']}, phase {record['infos'].get('*', {}).get('phase', '?')})"
                pytest.fail(changed(game, set_name, where, diff[0], diff[1], diff[2]))
        env.step(record["action"])
        i += 1
    if i != len(steps):
        pytest.fail(changed(game, set_name, f"step {i}", "end of episode", f"{len(steps)} steps", f"the episode ended after {i} steps"))


@pytest.mark.parametrize(("game", "set_name"), CASES, ids=[f"{g}__{s}" for g, s in CASES])
def test_golden_playthrough(game: str, set_name: str) -> None:
    replay(game, set_name)


def test_every_game_has_two_option_sets_and_no_stale_trace() -> None:
    assert set(OPTION_SETS) == set(ENV_VERSIONS)
    for game, sets in OPTION_SETS.items():
        assert "defaults" in sets and len(sets) >= 2, game
    expected = {f"{game}__{s}" for game, s in CASES}
    on_disk = {p.name.split(".")[0] for p in GOLDEN_DIR.iterdir() if p.name.endswith((".json", ".json.gz"))}
    assert on_disk == expected, f"stale or missing traces: re-record with python -m tests.golden.record ({on_disk ^ expected})"
    for game, set_name in CASES:
        assert trace_path(game, set_name).stat().st_size < 200_000, (game, set_name)


def test_replay_names_the_step_field_and_the_remedy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed reward fails at its first step with the game, set, step, field and what to do."""
    import whist_env.envs.whist_env as whist_env_module

    real_step = whist_env_module.WhistEnv.step

    def step_paying_one_more(self, action):  # the last trick of a hand pays one point more
        real_step(self, action)
        if any(self.terminations.values()):
            self.rewards = {a: r + 1.0 for a, r in self.rewards.items()}

    monkeypatch.setattr(whist_env_module.WhistEnv, "step", step_paying_one_more)
    with pytest.raises(pytest.fail.Exception) as failure:
        replay("german_whist", "defaults")
    message = str(failure.value)
    assert "golden playthrough german_whist / defaults" in message
    assert "field 'rewards.player_0'" in message and "step 52 " in message
    assert "the behaviour of whist/german_whist-v0 changed" in message.lower()
    assert "python -m tests.golden.record" in message
