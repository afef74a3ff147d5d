"""Teacher datasets (training/learn/teach.py, ``whist teach``): what a shard holds, that it replays
from its deal seeds, that workers and resumption change nothing, that a stop keeps what was
finished, DAgger labels, double-dummy and pimc values, and the command line."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import whist_env
from agents.registry import make_agent
from training import cli
from training.errors import Interrupted
from training.evaluation.seed_ranges import TRAINING
from training.learn import teach as teach_module
from training.learn.teach import (
    MAX_SEED,
    TeachSpec,
    double_dummy_values,
    first_deal_seed,
    load_shard,
    read_manifest,
    teach,
)
from whist_env.envs.policy_action import policy_action

GAME = "classic_whist"
OPTIONS = {"honours": False}
#: one classic hand: 13 tricks of 4 cards, every card a decision
HAND = 52


def spec(**kw) -> TeachSpec:
    return TeachSpec(**{"game": GAME, "options": OPTIONS, "episodes_per_shard": 2, **kw})


def raw_env():
    return whist_env.GAMES[GAME].raw_env(episode="hand", **OPTIONS)


def shards_of(folder, manifest=None):
    manifest = read_manifest(folder) if manifest is None else manifest
    return [load_shard(folder, entry) for entry in manifest["shards"]]


def replay(arrays, first_seed, visit=None):
    """Replay every episode of a shard from its deal seed with the stored actions; checks that
    each stored observation, mask and state is the one the environment shows, and returns the
    rewards credited to each seat's latest decision (recomputed) and each seat's total per episode.
    It checks the tricks each row's side took in the hand too. ``visit(env, agent, row)`` is
    called at each decision before it is played."""
    env = raw_env()
    credited = np.zeros(len(arrays["action"]), dtype=np.float64)
    totals: dict[tuple[int, int], float] = {}
    row = 0
    for j in range(int(arrays["episode"].max()) + 1):
        env.reset(seed=first_seed + j)
        latest: dict[str, int] = {}
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            ob = env.observe(agent)
            assert arrays["episode"][row] == j and arrays["seat"][row] == env.possible_agents.index(agent)
            assert np.array_equal(arrays["observation"][row], ob["observation"])
            assert np.array_equal(arrays["action_mask"][row], ob["action_mask"])
            assert np.array_equal(arrays["state"][row], env.state())
            assert ob["action_mask"][arrays["action"][row]] == 1
            if visit is not None:
                visit(env, agent, row)
            latest[agent] = row
            env.step(int(arrays["action"][row]))
            for a, r in env.rewards.items():
                seat = env.possible_agents.index(a)
                totals[j, seat] = totals.get((j, seat), 0.0) + r
                if a in latest:
                    credited[latest[a]] += r
            row += 1
        game = env.unwrapped.game  # one hand per episode: each row holds its side's tricks in it
        per_side = [sum(t for s, t in enumerate(game.last_hand[1]) if game.side_of(s) == side) for side in (0, 1)]
        rows = arrays["episode"] == j
        assert np.array_equal(arrays["tricks"][rows], [per_side[game.side_of(int(s))] for s in arrays["seat"][rows]])
    assert row == len(arrays["action"])  # every stored decision, no more
    return credited, totals


@pytest.fixture(scope="module")
def heuristic_dataset(tmp_path_factory):
    """Two shards of two hands each, the heuristic playing every seat (dataset seed 1)."""
    folder = tmp_path_factory.mktemp("heuristic")
    manifest = teach(spec(seed=1), 200, folder, progress=False)
    return folder, manifest


# ------------------------------------------------------------------------------ what a shard holds
def test_a_shard_holds_the_documented_arrays(heuristic_dataset):
    folder, manifest = heuristic_dataset
    assert [s["index"] for s in manifest["shards"]] == [0, 1]
    env = raw_env()
    d, ds, a = (env.observation_space(env.possible_agents[0])["observation"].shape[0], env.state_space.shape[0],
                env.action_space(env.possible_agents[0]).n)
    assert (manifest["obs_size"], manifest["state_size"], manifest["num_actions"]) == (d, ds, a)
    assert manifest["teacher"] == "heuristic" and manifest["student"] is None and manifest["double_dummy"] is False
    assert manifest["options"]["honours"] is False and manifest["options"]["episode"] == "hand"
    for entry, arrays in zip(manifest["shards"], shards_of(folder, manifest)):
        m = 2 * HAND
        assert entry["decisions"] == entry["labelled"] == m and entry["episodes"] == 2
        expected = {"observation": (np.float32, (m, d)), "action_mask": (np.int8, (m, a)), "state": (np.float32, (m, ds)),
                    "action": (np.int16, (m,)), "label": (np.int16, (m,)), "values": (np.float32, (m, a)),
                    "values_kind": (np.int8, (m,)), "reward": (np.float32, (m,)), "episode_return": (np.float32, (m,)),
                    "seat": (np.int8, (m,)), "episode": (np.int32, (m,)), "tricks": (np.int8, (m,))}
        assert {k: (v.dtype, v.shape) for k, v in arrays.items()} == {k: (np.dtype(t), s) for k, (t, s) in expected.items()}
        assert np.array_equal(arrays["label"], arrays["action"])  # no student: the teacher's action is played
        assert np.isnan(arrays["values"]).all() and not arrays["values_kind"].any()  # the heuristic has no values
        assert np.array_equal(arrays["episode"], np.repeat([0, 1], HAND))
        for episode in (0, 1):  # one hand per episode: every row holds its side's tricks, 13 in all
            rows = arrays["episode"] == episode
            seat, tricks = arrays["seat"][rows], arrays["tricks"][rows]
            for side in (0, 1):
                assert len(set(tricks[seat % 2 == side])) == 1
            assert tricks[seat % 2 == 0][0] + tricks[seat % 2 == 1][0] == 13
    assert manifest["decisions"] == manifest["labelled"] == 4 * HAND


def test_deal_seeds_lie_in_training_and_follow_the_documented_formula(heuristic_dataset):
    _, manifest = heuristic_dataset
    for entry in manifest["shards"]:
        k = entry["index"]
        first, count = entry["deal_seeds"]
        assert first == first_deal_seed(1, k, 2) == TRAINING.start + 1 * 2**24 + 2 * k
        assert count == 2 and first in TRAINING and first + count - 1 in TRAINING
    # the last dataset seed's last span still lies in TRAINING
    assert first_deal_seed(MAX_SEED, 2**24 - 1, 1) == TRAINING.stop - 1


def test_a_shard_replays_from_its_deal_seeds_and_its_returns_add_up(heuristic_dataset):
    folder, manifest = heuristic_dataset
    for entry, arrays in zip(manifest["shards"], shards_of(folder, manifest)):
        credited, totals = replay(arrays, entry["deal_seeds"][0])
        assert np.array_equal(arrays["reward"], credited.astype(np.float32))
        # the seat's return from each decision on: the sum of its rewards at that row and after, in the episode
        for k in range(len(arrays["action"])):
            same = (arrays["episode"] == arrays["episode"][k]) & (arrays["seat"] == arrays["seat"][k])
            assert arrays["episode_return"][k] == pytest.approx(arrays["reward"][k:][same[k:]].sum(), abs=1e-6)
        # a seat's first decision of an episode holds everything it received in that episode
        for (j, seat), total in totals.items():
            first = np.flatnonzero((arrays["episode"] == j) & (arrays["seat"] == seat))[0]
            assert arrays["episode_return"][first] == pytest.approx(total)
        assert np.abs(arrays["episode_return"]).sum() > 0  # the hands were scored


def test_workers_make_the_same_shards(tmp_path):
    """DAgger with a random student: what a shard draws depends on the shard alone, not on what
    the same process played before."""
    dagger = spec(seed=1, student="random", label_share=0.5)
    one = teach(dagger, 200, tmp_path / "one", workers=1, progress=False)
    two = teach(dagger, 200, tmp_path / "two", workers=2, progress=False)
    assert [s["index"] for s in one["shards"]] == [s["index"] for s in two["shards"]] == [0, 1]
    assert [s["labelled"] for s in one["shards"]] == [s["labelled"] for s in two["shards"]]
    assert [s["sha256"] for s in one["shards"]] == [s["sha256"] for s in two["shards"]]  # the very same files
    for a, b in zip(shards_of(tmp_path / "one", one), shards_of(tmp_path / "two", two)):
        assert a.keys() == b.keys()
        for key in a:
            assert a[key].dtype == b[key].dtype and a[key].tobytes() == b[key].tobytes(), key


# ------------------------------------------------------------------------------ the folder: resume, refuse, damage, stop
def test_resume_keeps_the_finished_shards_and_adds_new_ones(tmp_path):
    first = teach(spec(), 100, tmp_path, progress=False)
    assert [s["index"] for s in first["shards"]] == [0] and first["decisions"] == 2 * HAND
    shard0 = tmp_path / "shard-00000.npz"
    digest, mtime = hashlib.sha256(shard0.read_bytes()).hexdigest(), shard0.stat().st_mtime_ns
    assert digest == first["shards"][0]["sha256"]
    more = teach(spec(), 300, tmp_path, progress=False)
    assert [s["index"] for s in more["shards"]] == [0, 1, 2] and more["decisions"] == 6 * HAND
    assert more["shards"][0] == first["shards"][0]
    assert hashlib.sha256(shard0.read_bytes()).hexdigest() == digest and shard0.stat().st_mtime_ns == mtime
    assert read_manifest(tmp_path) == json.loads((tmp_path / "manifest.json").read_text()) == more
    # asking for no more than it holds plays nothing
    again = teach(spec(), 150, tmp_path, progress=False)
    assert again["shards"] == more["shards"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".npz") == [f"shard-0000{k}.npz" for k in range(3)]


@pytest.mark.parametrize(("change", "field"), [({"teacher": "random"}, "teacher"), ({"episodes_per_shard": 3}, "episodes_per_shard"),
                                                ({"seed": 1}, "seed"), ({"options": {"honours": True}}, "options")])
def test_a_folder_of_another_dataset_is_refused_naming_the_field(tmp_path, change, field):
    teach(spec(episodes_per_shard=1), 1, tmp_path, progress=False)
    before = (tmp_path / "manifest.json").read_bytes()
    with pytest.raises(ValueError, match=f"{field}: "):
        teach(spec(**{"episodes_per_shard": 1, **change}), 100, tmp_path, progress=False)
    assert (tmp_path / "manifest.json").read_bytes() == before


def test_a_changed_shard_fails_its_sha256(tmp_path):
    manifest = teach(spec(episodes_per_shard=1), 1, tmp_path, progress=False)
    entry = manifest["shards"][0]
    assert load_shard(tmp_path, entry)["action"].shape == (HAND,)
    path = tmp_path / entry["file"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="sha256"):
        load_shard(tmp_path, entry)
    path.unlink()
    with pytest.raises(ValueError, match="missing"):
        load_shard(tmp_path, entry)


def test_ctrl_c_keeps_the_finished_shards_and_the_same_command_resumes(tmp_path, monkeypatch):
    real, calls = teach_module.write_shard, []

    def failing(path, arrays):
        calls.append(path.name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(path, arrays)

    monkeypatch.setattr(teach_module, "write_shard", failing)
    with pytest.raises(Interrupted, match="1 finished shards") as caught:
        teach(spec(), 200, tmp_path, progress=False)
    assert caught.value.status == 130 and calls == ["shard-00000.npz", "shard-00001.npz"]
    manifest = read_manifest(tmp_path)
    assert [s["file"] for s in manifest["shards"]] == ["shard-00000.npz"] and manifest["decisions"] == 2 * HAND
    assert sorted(p.name for p in tmp_path.glob("*.npz")) == ["shard-00000.npz"]
    load_shard(tmp_path, manifest["shards"][0])  # its sha256 holds
    monkeypatch.setattr(teach_module, "write_shard", real)
    done = teach(spec(), 200, tmp_path, progress=False)
    assert [s["index"] for s in done["shards"]] == [0, 1]
    fresh = teach(spec(), 200, tmp_path / "fresh", progress=False)
    for a, b in zip(shards_of(tmp_path, done), shards_of(tmp_path / "fresh", fresh)):
        assert all(np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f") for k in a)


# ------------------------------------------------------------------------------ the spec
def test_bad_specs_are_refused():
    with pytest.raises(ValueError, match="student"):
        teach(spec(label_share=0.5), 10, "/nonexistent/never-made", progress=False)
    for seed in (-1, MAX_SEED + 1):
        with pytest.raises(ValueError, match="seed"):
            spec(seed=seed).check()
    spec(seed=MAX_SEED).check()
    for share in (0.0, 1.5):
        with pytest.raises(ValueError, match="label share"):
            spec(student="random", label_share=share).check()
    with pytest.raises(ValueError, match="unknown game"):
        TeachSpec(game="bridge").check()


# ------------------------------------------------------------------------------ DAgger
def test_dagger_labels_a_share_of_the_students_decisions_with_the_teachers_choice(tmp_path):
    manifest = teach(spec(student="random", label_share=0.5, episodes_per_shard=3), 1, tmp_path, progress=False)
    assert manifest["student"] == "random" and manifest["label_share"] == 0.5
    entry = manifest["shards"][0]
    arrays = load_shard(tmp_path, entry)
    label, action = arrays["label"], arrays["action"]
    labelled = label >= 0
    assert entry["labelled"] == manifest["labelled"] == int(labelled.sum())
    assert set(np.unique(label[~labelled])) == {-1}
    assert 0.3 < labelled.mean() < 0.7  # about half of 156 decisions
    heuristic = make_agent("heuristic", GAME, seed=0)
    asked = []

    def check(env, agent, row):
        if label[row] >= 0:
            asked.append(row)
            assert label[row] == policy_action(heuristic, env, agent), row

    replay(arrays, entry["deal_seeds"][0], check)  # the stored (student's) actions replay the hands
    assert asked == list(np.flatnonzero(labelled))
    choice = arrays["action_mask"].sum(-1) > 1
    assert (action[labelled & choice] != label[labelled & choice]).any()  # the student played, not the teacher


# ------------------------------------------------------------------------------ values
def test_double_dummy_values_of_every_legal_card(tmp_path):
    """The only test here that solves (DDS where endplay is installed, else the compiled solver,
    whose first call may compile: about half a minute in a fresh install)."""
    from agents.search.solving import card_values

    manifest = teach(spec(double_dummy=True, episodes_per_shard=1), 1, tmp_path, progress=False)
    assert manifest["double_dummy"] is True
    entry = manifest["shards"][0]
    arrays = load_shard(tmp_path, entry)
    dd, legal = arrays["double_dummy"], arrays["action_mask"] != 0
    assert dd.dtype == np.float32 and dd.shape == legal.shape
    assert np.array_equal(np.isfinite(dd), legal)  # classic: every decision is a card, every legal card valued
    assert ((dd[legal] >= 0) & (dd[legal] <= 13)).all()
    # minimax within a trick: the value of the card played is the next seat's best value, or
    # what is left of the 13 - (tricks before this one) when the next seat is an opponent
    side, action = arrays["seat"] % 2, arrays["action"].astype(np.int64)
    for k in range(HAND - 1):
        if k % 4 != 3:
            left = 13 - k // 4
            best_next = np.nanmax(dd[k + 1])
            assert dd[k, action[k]] == (best_next if side[k] == side[k + 1] else left - best_next), k
    rows = {}

    def recompute(env, agent, row):
        if row in (29, 42, 51):  # late in the hand: a quick solve whichever solver the dataset used
            seat = env.game.current_player
            objective = env.game.trick_objective(seat)
            values = card_values(env.game, misere=objective < 0)
            want = np.full(dd.shape[1], np.nan, dtype=np.float32)
            for card, tricks in values.items():
                want[card] = objective * tricks
            rows[row] = want
            assert np.array_equal(double_dummy_values(env, np.full(dd.shape[1], np.nan, dtype=np.float32)), want, equal_nan=True)

    replay(arrays, entry["deal_seeds"][0], recompute)
    assert sorted(rows) == [29, 42, 51]
    for row, want in rows.items():
        assert np.array_equal(dd[row], want, equal_nan=True), row


@pytest.mark.parametrize("game", ["romanian_whist", "german_whist", "minnesota_whist"])
def test_no_double_dummy_value_for_bids_the_stock_or_exact_contracts(game):
    """Bids (Romanian, Minnesota), German Whist's stock phase and Romanian card play (exact bids:
    objective 0) get no double-dummy value; none of these needs a solve."""
    from whist_env.rules.base import PLAY

    env = whist_env.GAMES[game].raw_env(episode="hand")
    env.reset(seed=5)
    heuristic = make_agent("heuristic", game)
    nan_row = np.full(env.action_space(env.possible_agents[0]).n, np.nan, dtype=np.float32)
    before_play = 0
    while env.game.phase != PLAY:
        assert np.isnan(double_dummy_values(env, nan_row)).all()
        env.step(policy_action(heuristic, env, env.agent_selection))
        before_play += 1
    assert before_play > 0
    if game == "romanian_whist":
        assert env.game.trick_objective(env.game.current_player) == 0
        assert np.isnan(double_dummy_values(env, nan_row)).all()


def test_a_pimc_teacher_stores_its_values_on_legal_actions(tmp_path):
    from agents.search.pimc import VALUES_POINTS

    manifest = teach(spec(teacher="pimc:worlds=2,rollouts=4,exact=0", episodes_per_shard=1), 1, tmp_path, progress=False)
    assert manifest["teacher"].startswith("pimc:") and "rollouts=4" in manifest["teacher"]
    arrays = load_shard(tmp_path, manifest["shards"][0])
    values, kind, legal = arrays["values"], arrays["values_kind"], arrays["action_mask"] != 0
    searched = kind != 0
    assert searched.any() and set(np.unique(kind[searched])) == {VALUES_POINTS}  # rolled out: points
    assert np.array_equal(np.isfinite(values[searched]), legal[searched])
    assert np.isnan(values[~searched]).all()
    assert (legal[~searched].sum(-1) == 1).all()  # only forced decisions go unsearched here
    assert np.array_equal(arrays["label"], arrays["action"])


# ------------------------------------------------------------------------------ the command line
def test_whist_teach_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "data"
    argv = ["teach", "--game", GAME, "--option", "honours=false", "--decisions", "60", "--shard-episodes", "1",
            "--out", str(out), "--quiet"]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out == (f"{out}: 104 decisions (104 labelled by heuristic) in 2 shards; 44 over --decisions 60: "
                                       "the run ends with the episode that reaches it\n")
    manifest = read_manifest(out)
    assert manifest["options"]["honours"] is False and manifest["episodes_per_shard"] == 1
    assert cli.main(argv) == 0  # resumed: nothing to add
    assert capsys.readouterr().out == (f"{out}: 104 decisions (104 labelled by heuristic) in 2 shards; it already held "
                                       "--decisions 60 or more: nothing added\n")


def test_whist_teach_says_where_it_stopped_and_what_it_made_again(tmp_path, capsys):
    """--decisions 300 with 100-hand shards: six hands (312 decisions), the shard left part-way;
    a damaged shard is named on stderr as it is made again."""
    out = tmp_path / "data"
    argv = ["teach", "--game", GAME, "--option", "honours=false", "--out", str(out), "--quiet", "--decisions"]
    assert cli.main([*argv, "300"]) == 0
    captured = capsys.readouterr()
    assert captured.out == (f"{out}: 312 decisions (312 labelled by heuristic) in 1 shard, the last with 6 of its 100 episodes "
                            "(a run asking for more completes it); 12 over --decisions 300: the run ends with the episode "
                            "that reaches it\n")
    assert captured.err == ""
    shard = out / "shard-00000.npz"
    shard.write_bytes(shard.read_bytes()[:-1])
    assert cli.main([*argv, "400"]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"{shard} does not match its sha256 in the manifest (damaged or changed): it is made again\n"
    assert captured.out == (f"{out}: 416 decisions (416 labelled by heuristic) in 1 shard, the last with 8 of its 100 episodes "
                            "(a run asking for more completes it); 16 over --decisions 400: the run ends with the episode "
                            "that reaches it\n")


def test_whist_teach_help_says_how_the_count_rounds_and_what_double_dummy_labels_cost(capsys):
    with pytest.raises(SystemExit):
        cli.main(["teach", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "at the end of the episode in which it reaches N" in text
    assert "the last shard then holds fewer episodes" in text
    assert "Bid Whist about 0.3 s a decision" in text


@pytest.mark.parametrize(("argv", "message"), [
    (["--game", "bridge"], "unknown game"),
    (["--label-share", "0.5"], "student"),
    (["--seed", str(MAX_SEED + 1)], "seed"),
    (["--teacher", "grandmaster"], "grandmaster"),
])
def test_whist_teach_errors(tmp_path, capsys, argv, message):
    status = cli.main(["teach", "--decisions", "10", "--out", str(tmp_path / "d"), "--quiet", *argv])
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("whist teach: error: ") and message in err and "Traceback" not in err
    assert not (tmp_path / "d").exists()


def test_out_must_be_a_dataset_folder_a_new_one_or_an_empty_one(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        teach(spec(), 10, tmp_path / "file", progress=False)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "a.yaml").write_text("game: classic_whist\n")
    with pytest.raises(ValueError, match="holds files but no teacher dataset"):
        teach(spec(), 10, tmp_path / "configs", progress=False)
    assert sorted(p.name for p in (tmp_path / "configs").iterdir()) == ["a.yaml"]
    (tmp_path / "empty").mkdir()
    assert teach(spec(), 10, tmp_path / "empty", progress=False)["decisions"] == HAND  # one whole hand


def test_resuming_makes_a_damaged_shard_again(tmp_path):
    manifest = teach(spec(), 3 * HAND, tmp_path, progress=False)
    path = tmp_path / manifest["shards"][0]["file"]
    good = path.read_bytes()
    path.write_bytes(good[:-10] + bytes(10))
    notes = []
    again = teach(spec(), 3 * HAND, tmp_path, progress=False, say=notes.append)
    assert notes == [f"{path} does not match its sha256 in the manifest (damaged or changed): it is made again"]
    assert path.read_bytes() == good and again["shards"] == manifest["shards"]


def test_a_damaged_or_missing_shard_is_made_again_as_it_was_even_when_the_count_is_held(tmp_path):
    """Shards 0 and 1 whole (two hands each), shard 2 part-way (one hand): shard 0 missing and
    shard 2 damaged are made again, shard 2 with its one hand, though a count of 1 plays nothing new."""
    manifest = teach(spec(), 5 * HAND, tmp_path, progress=False)
    assert [(s["index"], s["episodes"], s["decisions"]) for s in manifest["shards"]] == [(0, 2, 104), (1, 2, 104), (2, 1, 52)]
    assert manifest["shards"][2]["deal_seeds"] == [first_deal_seed(0, 2, 2), 1]
    first, last = tmp_path / "shard-00000.npz", tmp_path / "shard-00002.npz"
    good = {p: p.read_bytes() for p in (first, last)}
    first.unlink()
    last.write_bytes(b"not a shard")
    notes = []
    again = teach(spec(), 1, tmp_path, progress=False, say=notes.append)
    assert notes == [f"{first} is missing: it is made again",
                     f"{last} does not match its sha256 in the manifest (damaged or changed): it is made again"]
    assert again["shards"] == manifest["shards"] and again["decisions"] == 5 * HAND
    assert all(p.read_bytes() == data for p, data in good.items())


# ------------------------------------------------------------------------------ the count
def test_a_run_stops_at_the_end_of_the_episode_that_reaches_the_count(tmp_path, monkeypatch):
    """300 decisions of 52-decision hands: six hands played, no more, all in shard 0 (of 100), kept part-way."""
    played, real = [], teach_module.ShardPlayer.play

    def play(self, unit):
        arrays, seconds = real(self, unit)
        played.append((unit, len(arrays["action"])))
        return arrays, seconds

    monkeypatch.setattr(teach_module.ShardPlayer, "play", play)
    manifest = teach(spec(episodes_per_shard=100), 300, tmp_path, progress=False)
    assert played == [((0, 0, 100, 300), 312)]  # episodes 0 .. 99 of shard 0, ending after the one that reaches 300
    assert manifest["decisions"] == manifest["labelled"] == 312
    (entry,) = manifest["shards"]
    assert (entry["episodes"], entry["decisions"], entry["deal_seeds"]) == (6, 312, [first_deal_seed(0, 0, 100), 6])
    arrays = load_shard(tmp_path, entry)
    assert np.array_equal(arrays["episode"], np.repeat(np.arange(6), HAND))
    credited, _ = replay(arrays, entry["deal_seeds"][0])  # whole hands, from their deal seeds
    assert np.array_equal(arrays["reward"], credited.astype(np.float32))
    assert teach(spec(episodes_per_shard=100), 312, tmp_path, progress=False)["shards"] == [entry]
    assert len(played) == 1  # held: nothing played


def test_a_later_run_completes_the_part_way_shard_into_what_one_run_makes(tmp_path):
    """Shards of four hands (208 decisions): 300 decisions keep shard 1 with two hands; 520 then
    complete it and add shard 2 with two hands, the very files that one run of 520 makes."""
    first = teach(spec(episodes_per_shard=4), 300, tmp_path / "grown", progress=False)
    assert [(s["episodes"], s["decisions"]) for s in first["shards"]] == [(4, 208), (2, 104)]
    grown = teach(spec(episodes_per_shard=4), 520, tmp_path / "grown", progress=False)
    assert [(s["episodes"], s["decisions"]) for s in grown["shards"]] == [(4, 208), (4, 208), (2, 104)]
    assert grown["shards"][0] == first["shards"][0]
    once = teach(spec(episodes_per_shard=4), 520, tmp_path / "once", progress=False)
    assert grown["shards"] == once["shards"]  # the same sha256: the same bytes


class RecordingBar:
    """Stands in for training.progress.progress_bar: records every update and the count each
    shard was written at."""

    def __init__(self, total=None, initial=0, **kwargs):
        self.total, self.n, self.updates, self.written_at = total, initial, [], []

    def update(self, n=1):
        self.n += n
        self.updates.append(n)

    def set_postfix(self, *args, **kwargs):
        pass

    def close(self):
        pass


def recording_bar(monkeypatch):
    import training.progress

    bars = []

    def make(**kwargs):
        bars.append(RecordingBar(**kwargs))
        return bars[-1]

    real = teach_module.write_shard

    def write(path, arrays):
        bars[-1].written_at.append(bars[-1].n)
        return real(path, arrays)

    monkeypatch.setattr(training.progress, "progress_bar", make)
    monkeypatch.setattr(teach_module, "write_shard", write)
    return bars


def test_progress_moves_at_every_decision_before_the_shard_is_written(tmp_path, monkeypatch):
    bars = recording_bar(monkeypatch)
    teach(spec(episodes_per_shard=100), 300, tmp_path, progress=True)
    (bar,) = bars
    assert bar.total == 300 and bar.updates[:300] == [1] * 300 and bar.n == 300
    assert bar.written_at == [300]  # the one shard (six hands) was written after 300 steps of the bar


@pytest.mark.parametrize(("unit_seconds", "steps", "written_at"), [
    # runs of one hand: a step per hand, the last one short of a whole hand at the count
    (1e-9, [HAND] * 4 + [300 - 5 * HAND], [3 * HAND, 5 * HAND]),
    # runs of a whole shard (the rest of shard 0, then shard 1, cut after its second hand)
    (1e9, [3 * HAND, 300 - 4 * HAND], [HAND, 4 * HAND]),
])
def test_workers_stop_at_the_count_with_the_shards_of_a_serial_run_and_show_each_run_of_episodes(
        tmp_path, monkeypatch, unit_seconds, steps, written_at):
    """With workers: one hand here first, then the workers play runs of hands sized by
    UNIT_SECONDS; the progress moves as each run arrives, and the shards equal the serial run's."""
    monkeypatch.setattr(teach_module, "UNIT_SECONDS", unit_seconds)
    bars = recording_bar(monkeypatch)
    parallel = teach(spec(episodes_per_shard=4), 300, tmp_path / "workers", workers=2, progress=True)
    (bar,) = bars
    assert bar.updates == [1] * HAND + [0] + steps  # the hand played here moves the bar at each decision
    assert bar.written_at == written_at  # each shard is written as its last hand arrives, then the bar moves
    serial = teach(spec(episodes_per_shard=4), 300, tmp_path / "serial", progress=False)
    assert parallel["shards"] == serial["shards"] and [s["episodes"] for s in serial["shards"]] == [4, 2]
