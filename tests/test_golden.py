"""Golden playthroughs: every env replays its recorded episodes exactly (tests/golden/, docs/versioning.md).

Each trace is replayed with its recorded actions (and, for a script, its fixed deals). At the first
step where anything differs (the acting agent, an observation block, a block of the global state,
the legal actions, the rewards, the flags, the infos) the test fails naming the game, the trace,
the step, the acting agent, every differing block or field with its expected and actual values,
and what to do about it.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from golden.decode import BlockCodec, block_codecs, decode_blocks, encode_blocks
from golden.record import (
    ACTION_SEED,
    GOLDEN_DIR,
    GZIP_ABOVE,
    OPTION_SETS,
    RESET_SEED,
    REVOKE_SCRIPT,
    SCRIPTS,
    StepObserver,
    header,
    load_trace,
    make_env,
    trace_names,
    trace_path,
)

from whist_env.versions import ENV_VERSIONS, env_id

CASES = trace_names()

#: The whole golden set stays small enough to keep in the repository (bytes on disk).
MAX_TOTAL_BYTES = 3_000_000


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


def card_change(expected: str, got: str) -> str:
    """``"lost QH, gained KH"``: the cards two card-set strings do not share."""
    lost = [c for c in expected.split() if c not in got.split()]
    gained = [c for c in got.split() if c not in expected.split()]
    return ", ".join(part for part in (f"lost {' '.join(lost)}" if lost else "", f"gained {' '.join(gained)}" if gained else "") if part)


def describe(name: str, expected: Any, got: Any, codecs: dict[str, BlockCodec], layouts: dict[str, dict[str, slice]]) -> str:
    """One line of the failure message: which block or field, where it lies, expected and got,
    and for card sets the cards lost and gained (per relative seat)."""
    text = f"expected {json.dumps(expected)}, got {json.dumps(got)}"
    prefix, _, block = name.partition(".")
    if prefix in layouts and block in layouts[prefix]:
        sl = layouts[prefix][block]
        where = "observation" if prefix == "obs" else "state()"
        kind = codecs[block].kind
        line = f"{'observation' if prefix == 'obs' else 'global state'} block {block!r} ({where}[{sl.start}:{sl.stop}], {kind}): {text}"
        if kind == "cards" and isinstance(expected, str) and isinstance(got, str):
            line += f" ({card_change(expected, got)})"
        elif kind == "cards_by_seat" and all(isinstance(v, list) and all(isinstance(s, str) for s in v) for v in (expected, got)):
            seats = [f"relative seat {i}: {card_change(e, g)}" for i, (e, g) in enumerate(zip(expected, got)) if e != g]
            line += f" ({'; '.join(seats)})"
        elif isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got) and kind != "numbers":
            seats = [f"relative seat {i}: {json.dumps(e)} -> {json.dumps(g)}" for i, (e, g) in enumerate(zip(expected, got)) if e != g]
            line += f" ({'; '.join(seats)})"
        return line
    line = f"field {name!r}: {text}"
    diff = first_difference(expected, got, name)
    if isinstance(expected, dict) and isinstance(got, dict) and diff:
        line += f" (first difference at {diff[0]}: {json.dumps(diff[1])} -> {json.dumps(diff[2])})"
    return line


def remedy(game: str) -> str:
    return (
        f"The behaviour of {env_id(game)} changed: if deliberate, bump its version in its descriptor (whist_env/<game>_v<N>.py), "
        "record the change in CHANGELOG.md (docs/versioning.md) and re-record with python -m tests.golden.record"
    )


def changed(game: str, name: str, where: str, lines: list[str]) -> str:
    listed = "\n".join(f"  {line}" for line in lines)
    return f"golden playthrough {game} / {name} ({trace_path(game, name).name}), {where}:\n{listed}\n{remedy(game)}"


def replay(game: str, name: str) -> None:
    """Replay one trace, failing at its first differing step (module docstring)."""
    trace = load_trace(trace_path(game, name))
    script = SCRIPTS.get(game, {}).get(name)
    rerecord = "re-record with python -m tests.golden.record (docs/versioning.md)"
    if trace["env_id"] != env_id(game):
        pytest.fail(f"golden playthrough {game} / {name} was recorded for {trace['env_id']} but the env is now {env_id(game)}: {rerecord}")
    options = script.options if script else OPTION_SETS[game][name]
    wanted = {"options": options, "reset_seed": RESET_SEED}
    wanted |= {"reset_options": script.reset_options} if script else {"action_seed": ACTION_SEED}
    for key, value in wanted.items():
        if trace.get(key) != value:
            pytest.fail(f"golden playthrough {game} / {name}: the trace's {key} {trace.get(key)!r} differ from {value!r} "
                        f"in tests/golden/record.py: {rerecord}")
    if script:
        moves = []
        for record in trace["steps"]:
            moves += [{"redeal": record["redeal"]}] if "redeal" in record else []
            moves += [record["action"]] if record["action"] is not None else []
        if moves != list(script.moves):
            pytest.fail(f"golden playthrough {game} / {name}: the trace's moves differ from the script in tests/golden/record.py: {rerecord}")
    env = make_env(game, options)
    env.reset(seed=RESET_SEED, options=script.reset_options if script else None)
    head = header(game, name, env, options)
    lines = [describe(k, trace.get(k), v, {}, {}) for k, v in head.items() if k not in ("name", "options") and trace.get(k) != v]
    if lines:
        pytest.fail(changed(game, name, "after reset", lines))
    observer = StepObserver(env)
    layouts = {"obs": observer.layout, "state": observer.hidden_layout}
    raw = env.unwrapped
    steps = trace["steps"]
    for i, record in enumerate(steps):
        if not env.agents:
            pytest.fail(changed(game, name, f"step {i}", [f"the episode ended after {i} steps, the trace has {len(steps)}"]))
        if "redeal" in record:
            raw.redeal(record["redeal"])
        now = {"step": i} | ({"redeal": record["redeal"]} if "redeal" in record else {}) | observer.observe()
        keys = [k for k in record if k != "action"] + [k for k in now if k not in record]
        lines = [describe(k, record.get(k, "<absent>"), now.get(k, "<absent>"), observer.codecs, layouts) for k in keys if record.get(k, "<absent>") != now.get(k, "<absent>")]
        if lines:
            phase = record["infos"].get("*", next(iter(record["infos"].values()), {})).get("phase", "?")
            where = f"step {i}, {record['agent']} to act (phase {phase!r}, action {record['action']!r} next)"
            pytest.fail(changed(game, name, where, [f"{len(lines)} field(s) differ:", *lines]))
        if script and record["action"] is None:
            break  # a script ends with the record after its last move
        env.step(None if record["action"] is None else raw.action_id(record["action"]))
    if not script and env.agents:
        pytest.fail(changed(game, name, f"step {len(steps)}", [f"the trace ends after {len(steps)} steps, but {env.agent_selection} is still to act"]))


@pytest.mark.parametrize(("game", "name"), CASES, ids=[f"{g}__{s}" for g, s in CASES])
def test_golden_playthrough(game: str, name: str) -> None:
    replay(game, name)


def test_every_game_has_two_option_sets_and_no_stale_trace() -> None:
    assert set(OPTION_SETS) == set(ENV_VERSIONS)
    for game, sets in OPTION_SETS.items():
        assert "defaults" in sets and len(sets) >= 2, game
    expected = {f"{game}__{s}" for game, s in CASES}
    on_disk = {p.name.split(".")[0] for p in GOLDEN_DIR.iterdir() if p.name.endswith((".json", ".json.gz"))}
    assert on_disk == expected, f"stale or missing traces: re-record with python -m tests.golden.record ({on_disk ^ expected})"
    sizes = {trace_path(g, s).name: trace_path(g, s).stat().st_size for g, s in CASES}
    assert all(size <= GZIP_ABOVE for size in sizes.values()), sizes
    assert sum(sizes.values()) < MAX_TOTAL_BYTES, sizes


def test_golden_traces_are_readable_with_no_hashes() -> None:
    """A trace names cards, seats and labels; nothing in it is a hash."""
    trace = load_trace(trace_path("classic_whist", "defaults"))
    first = trace["steps"][0]
    assert len(first["obs.hand"].split()) == 13 and first["obs.trump"] in ("C", "D", "H", "S")
    assert first["action"] in first["legal"] and first["obs.phase"] == "play"
    assert "sha256" not in json.dumps(trace)


@pytest.mark.parametrize("game", list(OPTION_SETS))
def test_decoded_blocks_encode_back_exactly(game: str) -> None:
    """Decoding is lossless: the decoded observation and state of a few steps encode back to
    the same bytes, and a block that fits no rule is kept as raw numbers."""
    env = make_env(game, {})
    env.reset(seed=3)
    raw = env.unwrapped
    layout, state_layout = raw.observation_layout(), raw.state_layout()
    codecs = block_codecs(env, state_layout)
    rng = np.random.default_rng(0)
    for _ in range(12):
        vector, state = env.observe(env.agent_selection)["observation"], env.state()
        blocks = decode_blocks(codecs, layout, vector)
        assert encode_blocks(codecs, layout, blocks, vector.size).tobytes() == vector.tobytes()
        full = decode_blocks(codecs, state_layout, state)
        assert encode_blocks(codecs, state_layout, full, state.size).tobytes() == state.tobytes()
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    odd = vector.copy()
    odd[layout["hand"].start] = 0.5  # no card flag: the block falls back to its numbers
    odd[layout["leader"]] = 1.0  # several seats at once: no one-hot seat
    decoded = decode_blocks(codecs, layout, odd)
    assert decoded["hand"]["raw"][0] == 0.5 and decoded["leader"] == {"raw": [1] * len(decoded["leader"]["raw"])}
    assert encode_blocks(codecs, layout, decoded, odd.size).tobytes() == odd.tobytes()


def test_replay_names_the_step_field_and_the_remedy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed reward fails at its first step with the game, trace, step, field and what to do."""
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
    assert "field 'rewards'" in message and "step 52, " in message
    assert "the behaviour of whist/german_whist-v0 changed" in message.lower()
    assert "python -m tests.golden.record" in message


def test_replay_names_the_observation_block_and_its_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """One observation feature changed (the turn-up card's flag cleared) fails at the first step
    naming the observation block, its place in the vector, the old and new values and the card lost."""
    from whist_env.envs.encoding import ObservationEncoder

    real_encode = ObservationEncoder.encode

    def encode_without_turn_up(self, seat):
        out = real_encode(self, seat)
        out[self.layout["turn_up"]] = 0.0
        return out

    monkeypatch.setattr(ObservationEncoder, "encode", encode_without_turn_up)
    with pytest.raises(pytest.fail.Exception) as failure:
        replay("classic_whist", "defaults")
    message = str(failure.value)
    first = load_trace(trace_path("classic_whist", "defaults"))["steps"][0]
    turn_up = first["obs.turn_up"]
    assert f"step 0, {first['agent']} to act" in message
    assert f"observation block 'turn_up' (observation[468:520], cards): expected \"{turn_up}\", got \"\" (lost {turn_up})" in message
    assert "1 field(s) differ" in message  # and no other block


# ------------------------------------------------------------------ the scripted revoke (RULES.md §2.9)
def play_script(env: Any, moves: Any) -> list[dict[str, Any]]:
    """Play ``moves`` (labels and ``{"redeal": ...}``); the infos and rewards after each action."""
    after = []
    for move in moves:
        if isinstance(move, dict):
            env.unwrapped.redeal(move["redeal"])
            continue
        env.step(env.unwrapped.action_id(move))
        after.append({"infos": env.infos["player_0"], "rewards": dict(env.rewards), "next": env.agent_selection})
    return after


def by_side(side_0: int, side_1: int) -> dict[str, int]:
    return {"player_0": side_0, "player_1": side_1, "player_2": side_0, "player_3": side_1}


def test_scripted_revoke_is_established_and_penalised() -> None:
    """The script's exact values: hand 1 scores 2 : 4 (8 tricks; 4 honours); in hand 2 player_2's
    revoke is hidden while pending, established when player_2 plays a club, the hand is annulled
    (its trick unscored), player_0+player_2's score becomes 0 and the same dealer deals again."""
    env = make_env("classic_whist", REVOKE_SCRIPT.options)
    env.reset(seed=RESET_SEED, options=REVOKE_SCRIPT.reset_options)
    after = play_script(env, REVOKE_SCRIPT.moves)
    assert len(after) == 52 + 8
    end_of_hand_1 = after[51]
    info = end_of_hand_1["infos"]
    assert info["last_hand"] == {
        "hand_number": 0,
        "tricks_won": {"player_0": 8, "player_1": 0, "player_2": 0, "player_3": 5},
        "hand_points": by_side(2, 4),
        "score": by_side(2, 4),
    }
    assert info["score"] == by_side(2, 4) and info["hand_number"] == 1
    assert end_of_hand_1["rewards"] == by_side(-2, 2)  # score_diff: 2 - 4 for player_0's side
    assert "revoke" not in info
    revoke_trick = after[52 + 3]  # KC 2H AC 3C: player_2 held 7C
    assert revoke_trick["infos"]["last_trick"] == {
        "cards": {"player_1": "KC", "player_2": "2H", "player_3": "AC", "player_0": "3C"},
        "leader": "player_1",
        "winner": "player_3",
    }
    assert revoke_trick["infos"]["tricks_won"] == {"player_0": 0, "player_1": 0, "player_2": 0, "player_3": 1}
    assert all("revoke" not in step["infos"] for step in after[:-1])  # a pending revoke is announced nowhere
    established = after[-1]  # player_2 plays 7C
    info = established["infos"]
    assert info["revoke"] == "player_2"
    assert info["score"] == by_side(0, 4)
    assert info["hand_points"] == by_side(-2, 0)
    assert info["last_hand"] == {
        "hand_number": 1,
        "tricks_won": {"player_0": 0, "player_1": 0, "player_2": 0, "player_3": 1},
        "hand_points": by_side(-2, 0),
        "score": by_side(0, 4),
    }
    assert "last_trick" not in info  # the hand stopped inside trick 2
    assert established["rewards"] == by_side(-2, 2)
    assert info["hand_number"] == 2 and info["tricks_won"] == by_side(0, 0) and info["phase"] == "play"
    # the same dealer (player_0) deals hand 3; player_1, on its left, leads; the annulled hand
    # does not count as a hand of the game
    assert env.unwrapped.current_deal()["dealer"] == "player_0"
    assert established["next"] == "player_1"
    layout = env.unwrapped.observation_layout()
    vector = env.observe("player_1")["observation"]
    assert vector[layout["dealer"]].tolist() == [0, 0, 0, 1]  # player_0, three seats after player_1
    assert vector[layout["scores"]].tolist() == [pytest.approx(4 / 5), 0]  # own side first, score / target
    assert vector[layout["hand_in_game"]].tolist() == [1 / 16]
    assert vector[layout["tricks_won"]].tolist() == [0, 0, 0, 0]
    # the trace's last record shows the same
    last = load_trace(trace_path("classic_whist", "scripted_revoke"))["steps"][-1]
    assert last["agent"] == "player_1" and last["action"] is None and last["infos"]["*"] == json.loads(json.dumps(info))
    assert last["obs.dealer"] == 3 and last["obs.scores"] == [0.8, 0] and last["obs.hand_in_game"] == 0.0625
