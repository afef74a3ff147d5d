"""Game records (whist_env/records.py, docs/records.md): record -> replay for every game, and a
tampered record reported at the right step; ``whist eval --records``."""

from __future__ import annotations

import copy
import json

import pytest

from agents.random_agent import RandomAgent
from training import cli
from whist_env import GAMES
from whist_env.records import SCHEMA, VERSION, read_records, record_episode, replay_record, write_records

GAME_NAMES = sorted(GAMES)


def _record(game: str, seed: int = 4, episode: str = "hand") -> dict:
    env = GAMES[game].raw_env()
    policies = {a: RandomAgent(seed=seed * 10 + i) for i, a in enumerate(env.possible_agents)}
    return record_episode(GAMES[game], game, {"episode": episode}, seed, None, policies)


def _env_before(record: dict, step: int):
    """The raw env replayed up to (not including) action ``step``."""
    env = GAMES[record["game"]].raw_env(**record["options"])
    env.reset(seed=record["seed"], options=record["reset_options"])
    for entry in record["actions"][:step]:
        env.step(entry["action"])
    return env


def _trick_steps(record: dict) -> list[int]:
    """Indices of the actions that completed a trick (first hand's tricks first)."""
    env = _env_before(record, 0)
    out = []
    for entry in record["actions"]:
        env.step(entry["action"])
        if "last_trick" in env.infos[entry["agent"]]:
            out.append(entry["step"])
    return out


def _choice_step(record: dict, card_play: bool) -> tuple[int, int]:
    """A step (and another legal action there) where the agent had a choice; with
    ``card_play`` a card played to a trick in the middle of the hand, else the first choice."""
    env = _env_before(record, 0)
    g = env.game
    candidates = []
    for entry in record["actions"]:
        legal = [a for a in g.legal_action_list() if a != entry["action"]]
        if legal and entry["hand_number"] == 0 and (not card_play or g.phase in g.CARD_PLAY_PHASES):
            candidates.append((entry["step"], legal[0]))
        env.step(entry["action"])
    assert candidates, "no step with a choice"
    return candidates[len(candidates) // 2] if card_play else candidates[0]


@pytest.mark.parametrize("game", GAME_NAMES)
def test_record_replays_for_every_game(game, tmp_path):
    record = _record(game)
    assert record["schema"] == SCHEMA and record["version"] == VERSION
    assert record["result"]["terminated"] and record["result"]["hands_played"] == len(record["hands"]) == 1
    assert all(len(e["check"]) == 12 for e in record["actions"])
    assert replay_record(record).ok
    path = write_records([record, _record(game, seed=5)], tmp_path / "r.jsonl")
    loaded = read_records(path)
    assert len(loaded) == 2 and loaded[0] == json.loads(json.dumps(record))
    for r in loaded:
        report = replay_record(r)
        assert report.ok and report.step is None and report.message == "ok", report


@pytest.mark.parametrize("game", ["classic_whist", "romanian_whist", "minnesota_whist"])
def test_whole_game_record_replays(game):
    record = _record(game, seed=2, episode="game")
    assert record["result"]["winners"] and len(record["hands"]) >= 2
    assert replay_record(record).ok


@pytest.mark.parametrize("game", GAME_NAMES)
@pytest.mark.parametrize("card_play", [True, False], ids=["card", "first-choice"])
def test_changed_action_is_reported_at_its_step(game, card_play):
    record = _record(game)
    step, other = _choice_step(record, card_play)
    env = _env_before(record, step)
    tampered = copy.deepcopy(record)
    tampered["actions"][step].update(action=other, label=env.action_label(other))
    report = replay_record(tampered)
    assert not report.ok and report.step == step, report
    # only the id changed: the label no longer matches
    only_id = copy.deepcopy(record)
    only_id["actions"][step]["action"] = other
    report = replay_record(only_id)
    assert not report.ok and report.step == step and "the record says" in report.message, report


@pytest.mark.parametrize("game", GAME_NAMES)
def test_changed_trick_winner_is_reported_at_the_trick(game):
    record = _record(game)
    steps = _trick_steps(record)
    t = len(steps) // 2
    tampered = copy.deepcopy(record)
    trick = tampered["hands"][0]["tricks"][t]
    trick["winner"] = next(a for a in trick["cards"] if a != trick["winner"])
    report = replay_record(tampered)
    assert not report.ok and report.step == steps[t] and f"trick {t + 1} of hand 1" in report.message, report  # messages number tricks and hands from 1


@pytest.mark.parametrize("game", GAME_NAMES)
def test_changed_score_is_reported_at_the_hand_end_and_result(game):
    record = _record(game)
    last = len(record["actions"]) - 1
    tampered = copy.deepcopy(record)
    agent = next(iter(tampered["hands"][0]["points"]))
    tampered["hands"][0]["points"][agent] += 1
    report = replay_record(tampered)
    assert not report.ok and report.step == last and "scored" in report.message, report
    tampered = copy.deepcopy(record)
    tampered["result"]["scores"][agent] += 1
    report = replay_record(tampered)
    assert not report.ok and report.step == len(record["actions"]) and report.message.startswith("result"), report


def test_changed_deal_and_bad_records():
    record = _record("classic_whist")
    tampered = copy.deepcopy(record)
    hands = tampered["hands"][0]["deal"]["hands"]
    hands["player_0"][0], hands["player_1"][0] = hands["player_1"][0], hands["player_0"][0]
    report = replay_record(tampered)
    assert not report.ok and report.step == 0 and "dealt differently" in report.message
    extra = copy.deepcopy(record)
    extra["actions"].append(dict(extra["actions"][-1], step=len(extra["actions"])))
    assert replay_record(extra).step == len(record["actions"])
    with pytest.raises(ValueError, match="version"):
        replay_record(dict(record, version=99))
    with pytest.raises(ValueError, match="unknown game"):
        replay_record(dict(record, game="bridge"))


def test_read_records_names_a_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_record("classic_whist")) + "\n{not json\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:2"):
        read_records(path)


def test_whist_eval_writes_one_records_file_per_match(tmp_path, capsys):
    out = tmp_path / "recs"
    status = cli.main(["eval", "--game", "cutthroat_whist", "--agents", "random", "random", "random",
                       "--deals", "2", "--quiet", "--records", str(out)])
    assert status == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == [
        "cutthroat_whist__random#2__vs__random#3.jsonl",
        "cutthroat_whist__random__vs__random#2.jsonl",
        "cutthroat_whist__random__vs__random#3.jsonl",
    ]
    records = read_records(out / files[1])
    assert len(records) == 2 * 3  # 2 deals, each played once per side
    assert [r["meta"]["deal_index"] for r in records] == [0, 0, 0, 1, 1, 1]
    assert [r["meta"]["side_a"] for r in records] == [0, 1, 2] * 2
    assert records[1]["players"] == {"player_0": "random#2", "player_1": "random", "player_2": "random#2"}
    assert all(replay_record(r).ok for r in records)


def test_whist_replay_says_which_record_it_shows_of_several(tmp_path, capsys):
    records = [_record("classic_whist", seed=s) for s in (1, 2, 3)]
    several = write_records(records, tmp_path / "several.jsonl")
    page = tmp_path / "page.html"
    assert cli.main(["replay", str(several), "--html", str(page)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [f"showing record 0 of 3 in {several} (0-based); pick another with --index N, N from 0 to 2 "
                       "(negative counts from the end)"]
    shown = page.read_text()
    # an explicit --index, or a file of one record, needs no such line
    assert cli.main(["replay", str(several), "--index", "0", "--html", str(page)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
    assert page.read_text() == shown  # the first record was the one shown
    assert cli.main(["replay", str(several), "--index", "-1", "--html", str(page)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
    assert page.read_text() != shown
    one = write_records(records[:1], tmp_path / "one.jsonl")
    assert cli.main(["replay", str(one), "--html", str(page)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
