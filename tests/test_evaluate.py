"""Duplicate-deal evaluation (training/evaluation/match.py) and the ``whist eval`` command."""

from __future__ import annotations

import csv
import itertools
import json
import math

import pytest

from agents.heuristics import ClassicHeuristicAgent
from agents.random_agent import RandomAgent
from training import cli
from training.evaluation.match import PairResult, deal_options, evaluate_pair, format_table, save_results
from whist_env import GAMES, classic_whist_v0


class RecordingAgent:
    """Plays like ``inner`` and records, per play, the hand each of its seats was dealt."""

    def __init__(self, inner, name):
        self.inner = inner
        self.name = name
        self.seen = []  # (seat, dealer, turn_up, hand) at the seat's first decision of a hand

    def act(self, observation, info_state=None):
        if len(info_state["hand"]) == 13:
            self.seen.append((info_state["seat"], info_state["dealer"], info_state["turn_up"], tuple(info_state["hand"])))
        return self.inner.act(observation, info_state)


def test_evaluate_pair_returns_sane_numbers():
    # 15 deals: the fewest that get a t-interval and a test (training.evaluation.stats.MIN_DEALS)
    r = evaluate_pair("classic_whist", ClassicHeuristicAgent(), RandomAgent(seed=0), num_deals=15, seed=3)
    assert isinstance(r, PairResult)
    assert (r.agent_a, r.agent_b, r.game) == ("heuristic", "random", "classic_whist")
    assert r.deals == 15 and r.games == 30 and r.hands == 30 and r.interval_note == ""
    assert 0.0 <= r.win_rate_ci[0] <= r.win_rate <= r.win_rate_ci[1] <= 1.0
    assert r.points_per_hand_ci[0] <= r.points_per_hand <= r.points_per_hand_ci[1]
    assert 0.0 <= r.p_value <= 1.0
    assert r.significant == (r.p_value < 0.05)
    assert r.points_per_hand > 0  # the heuristic out-scores random play even on a few deals
    d = r.to_dict()
    assert json.loads(json.dumps(d))["win_rate_ci"] == list(r.win_rate_ci)


def test_deterministic_agent_against_itself_nets_exactly_zero():
    h = ClassicHeuristicAgent()
    r = evaluate_pair("classic_whist", h, h, num_deals=6, seed=11)
    assert r.points_per_hand == 0.0
    assert r.win_rate == 0.5
    assert not r.significant


def test_duplicate_deals_replay_the_same_cards_with_sides_swapped():
    a = RecordingAgent(RandomAgent(seed=1), "A")
    b = RecordingAgent(RandomAgent(seed=2), "B")
    evaluate_pair("classic_whist", a, b, num_deals=3, seed=7)
    # Per deal: play 1 has A on seats {0, 2}, play 2 has A on seats {1, 3}; two records per play.
    assert len(a.seen) == len(b.seen) == 3 * 2 * 2
    for deal in range(3):
        a1, a2 = a.seen[4 * deal : 4 * deal + 2], a.seen[4 * deal + 2 : 4 * deal + 4]
        b1, b2 = b.seen[4 * deal : 4 * deal + 2], b.seen[4 * deal + 2 : 4 * deal + 4]
        assert {s for s, *_ in a1} == {0, 2} and {s for s, *_ in b1} == {1, 3}
        assert {s for s, *_ in a2} == {1, 3} and {s for s, *_ in b2} == {0, 2}
        first = {s: rest for s, *rest in a1 + b1}
        second = {s: rest for s, *rest in a2 + b2}
        assert first == second  # same hands, dealer and turn-up seat by seat
        hands_of_a_first = {rest[-1] for _, *rest in a1}
        hands_of_b_second = {rest[-1] for _, *rest in b2}
        assert hands_of_a_first == hands_of_b_second  # B now holds A's cards
    assert len({rec[3] for rec in a.seen}) == 12  # the three deals differ


def test_deal_options_replay_the_deal():
    raw = classic_whist_v0.raw_env(episode="hand")
    deal = deal_options(raw, seed=5)
    hands_before = list(raw.game.hands)
    assert set(deal) == {"hands", "dealer", "turn_up"}
    assert deal["turn_up"] in deal["hands"][deal["dealer"]]
    raw.reset(seed=99, options=deal)
    assert list(raw.game.hands) == hands_before


def test_options_and_non_duplicate_mode():
    r = evaluate_pair(
        "classic_whist", RandomAgent(seed=0), RandomAgent(seed=1), num_deals=4, seed=0,
        options={"trump_mode": "fixed_rotation", "honours": False}, duplicate=False,
    )
    assert r.games == 4 and r.hands == 4 and not r.duplicate
    assert r.options == {"episode": "hand", "trump_mode": "fixed_rotation", "honours": False}


def test_episode_game_counts_every_hand():
    r = evaluate_pair("classic_whist", ClassicHeuristicAgent(), RandomAgent(seed=0), num_deals=2, seed=0,
                      options={"episode": "game", "target_score": 2})
    assert r.games == 4 and r.hands >= 4


def test_evaluate_pair_rejects_bad_arguments():
    with pytest.raises(ValueError, match="unknown game"):
        evaluate_pair("no_such_whist", RandomAgent(), RandomAgent(), 2)
    with pytest.raises(ValueError, match="num_deals"):
        evaluate_pair("classic_whist", RandomAgent(), RandomAgent(), 0)
    with pytest.raises(ValueError, match="target_score"):
        evaluate_pair("classic_whist", RandomAgent(), RandomAgent(), 2, options={"target_score": 0})


def test_an_illegal_action_names_the_agent():
    class Cheater:
        name = "cheater"

        def act(self, observation, info_state=None):
            return int((observation["action_mask"] == 0).nonzero()[0][0])

    with pytest.raises(ValueError, match="cheater"):
        evaluate_pair("classic_whist", Cheater(), RandomAgent(), 1)


def test_table_and_files(tmp_path):
    r = evaluate_pair("classic_whist", ClassicHeuristicAgent(), RandomAgent(seed=0), num_deals=3, seed=1)
    one = evaluate_pair("classic_whist", RandomAgent(seed=0), RandomAgent(seed=1), num_deals=1, seed=1)
    assert math.isnan(one.p_value) and not one.significant
    table = format_table([r, one])
    assert "heuristic" in table and "win rate" in table and "n/a" in table
    paths = save_results([r, one], tmp_path / "out")
    assert [p.name for p in paths] == ["results.json", "results.csv"]
    data = json.loads(paths[0].read_text())
    assert data[0]["agent_a"] == "heuristic" and data[1]["p_value"] is None
    rows = list(csv.DictReader(paths[1].read_text().splitlines()))
    assert rows[0]["deals"] == "3" and rows[0]["agent_b"] == "random"


# ------------------------------------------------------------------------------ command line
@pytest.fixture
def eval_only_cli(monkeypatch):
    """The CLI with only the ``eval`` subcommand (the others belong to other modules)."""
    monkeypatch.setattr(cli, "SUBCOMMANDS", {"eval": cli.SUBCOMMANDS["eval"]})


def test_cli_eval_writes_json_and_csv(tmp_path, capsys, eval_only_cli):
    out = tmp_path / "eval"
    code = cli.main(["eval", "--game", "classic_whist", "--agents", "heuristic", "random", "random",
                     "--deals", "3", "--seed", "2", "--option", "honours=false", "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "random#2" in printed and "points/hand" in printed
    data = json.loads((out / "results.json").read_text())
    assert [(d["agent_a"], d["agent_b"]) for d in data] == [("heuristic", "random"), ("heuristic", "random#2"), ("random", "random#2")]
    assert all(d["options"]["honours"] is False for d in data)
    assert len(list(csv.DictReader((out / "results.csv").read_text().splitlines()))) == 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "heuristic", "minimax"], "bad agent spec 'minimax'"),
        (["--agents", "heuristic", "checkpoint:"], "needs a path"),
        (["--agents", "heuristic", "zoo:no_such_whist"], "error: bad agent spec 'zoo:no_such_whist': unknown game 'no_such_whist'"),
        (["--game", "no_such_whist", "--agents", "random", "random"], "unknown game"),
        (["--agents", "random"], "at least two"),
        (["--agents", "random", "random", "--option", "nonsense=1"], "nonsense"),
        (["--agents", "random", "random", "--workers", "0"], "--workers must be >= 1"),
    ],
)
def test_cli_eval_bad_input_exits_2(argv, message, capsys, eval_only_cli):
    assert cli.main(["eval", "--deals", "2", "--quiet", *argv]) == 2
    assert message in capsys.readouterr().err


def test_cli_eval_help_explains_options(capsys, eval_only_cli):
    with pytest.raises(SystemExit):
        cli.main(["eval", "--help"])
    text = capsys.readouterr().out
    for opt in ("--game", "--agents", "--deals", "--seed", "--option", "--out", "--no-duplicate"):
        assert opt in text


class FirstLegal:
    """A deterministic agent for any game: the lowest legal action."""

    name = "first"

    def act(self, observation, info_state=None):
        return int(observation["action_mask"].nonzero()[0][0])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_game_duplicate_self_play_nets_exactly_zero(game):
    agent = FirstLegal()
    r = evaluate_pair(game, agent, agent, num_deals=3, seed=4)
    assert r.points_per_hand == 0.0 and r.win_rate == 0.5 and not r.significant
    assert r.games == 3 * num_sides(game)


def num_sides(game: str) -> int:
    return GAMES[game].raw_env().game.num_sides


def test_win_rate_interval_never_collapses_on_identical_deals():
    from training.evaluation.match import summarize_pair
    from training.evaluation.stats import wilson_interval

    r = summarize_pair([0.0] * 5, [0.5] * 5, agent_a="a", agent_b="b", game="classic_whist", hands=10)
    lo, hi = r.win_rate_ci
    assert r.win_rate == 0.5 and (lo, hi) == wilson_interval(0.5, 5)
    assert (round(lo, 3), round(hi, 3)) == (0.170, 0.830)  # Wilson 95% for a share of 0.5 over 5
    # the same formula as scipy's Wilson interval for whole counts
    from scipy.stats import binomtest

    ci = binomtest(7, 10).proportion_ci(method="wilson")
    assert wilson_interval(0.7, 10) == pytest.approx((ci.low, ci.high))
    r = summarize_pair([3.0, 2.0, 4.0], [1.0, 1.0, 1.0], agent_a="a", agent_b="b", game="classic_whist", hands=6)
    assert r.win_rate == 1.0 and r.win_rate_ci[1] == 1.0 and r.win_rate_ci[0] < 0.5


def test_rule_differences_name_the_options_a_checkpoint_was_trained_with():
    from training.evaluation.match import rule_differences
    from whist_env.rules.classic import ClassicOptions

    class Trained:
        trained_options = {"honours": False, "target_score": 5, "episode": "hand", "trump_rotation": ["S", "H", "D", "C"]}

    assert rule_differences(Trained(), ClassicOptions()) == "honours=False (here True)"
    assert rule_differences(Trained(), ClassicOptions(honours=False)) == ""
    assert rule_differences(object(), ClassicOptions()) == ""


def test_workers_give_exactly_the_serial_result(tmp_path):
    """Deals played by a pool of processes: the same result, deal outcomes and records as one
    process, for agents with their own random generators (random play, PIMC worlds)."""
    from agents.registry import make_agent

    runs = {}
    for workers in (1, 2):
        outcomes = []
        records = tmp_path / f"records_{workers}.jsonl"
        result = evaluate_pair("german_whist", make_agent("pimc:worlds=2,exact=1", "german_whist", seed=workers),
                               make_agent("random", "german_whist", seed=10 + workers), 4, seed=8, workers=workers,
                               on_deal=outcomes.append, records_path=records)
        data = result.to_dict()
        del data["seconds"]
        runs[workers] = (data, outcomes, records.read_text())
    assert runs[1] == runs[2]
    assert [o.index for o in runs[2][1]] == [0, 1, 2, 3]


def test_a_play_does_not_depend_on_the_plays_before_it():
    """Every play reseeds the agents: skipping deals (a resumed league) changes nothing else."""
    from agents.registry import make_agent

    def outcomes(skip):
        seen = []
        evaluate_pair("classic_whist", make_agent("random", "classic_whist"), make_agent("random", "classic_whist"), 5,
                      seed=3, on_deal=seen.append, skip_deals=skip)
        return {o.index: o for o in seen}

    full, resumed = outcomes(()), outcomes({0, 1, 3})
    assert {i: full[i] for i in (2, 4)} == resumed


def test_workers_reject_bad_counts_and_unpicklable_agents():
    with pytest.raises(ValueError, match="workers must be an int >= 1"):
        evaluate_pair("classic_whist", RandomAgent(seed=0), RandomAgent(seed=1), 2, workers=0)

    class Local(RandomAgent):  # a class defined in a function cannot be pickled
        pass

    with pytest.raises(ValueError, match="can be pickled"):
        evaluate_pair("classic_whist", Local(seed=0), RandomAgent(seed=1), 2, workers=2)


def test_workers_started_by_an_unguarded_script_fail_with_a_clear_error(tmp_path):
    """Spawned workers import the main script again: one without a __main__ guard kills them."""
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text("from agents.random_agent import RandomAgent\nfrom training.evaluation.match import evaluate_pair\n"
                      "evaluate_pair('classic_whist', RandomAgent(seed=0), RandomAgent(seed=1), 4, workers=2)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert 'must start them under `if __name__ == "__main__":`' in done.stderr


# ------------------------------------------------------------------------------ honest intervals
def test_mean_summary_gives_no_interval_from_too_few_deals_or_no_spread():
    from training.evaluation.stats import MIN_DEALS, mean_summary

    assert MIN_DEALS == 15
    one = mean_summary([2.5])
    assert one.mean == 2.5 and one.n == 1 and one.note == "too few deals (1 < 15)"
    assert all(math.isnan(x) for x in (*one.ci, one.p_value)) and not one.significant
    three = mean_summary([-1.0, -1.0, -1.0])  # whist eval --deals 3 once printed [-1.000, -1.000], p < 1e-4
    assert three.mean == -1.0 and three.note == "too few deals (3 < 15)"
    assert all(math.isnan(x) for x in (*three.ci, three.p_value)) and not three.significant
    flat = mean_summary([-1.0] * 20)  # enough deals, but no sample variance: no width to trust
    assert flat.mean == -1.0 and flat.note == "no spread (every deal -1)"
    assert all(math.isnan(x) for x in (*flat.ci, flat.p_value)) and not flat.significant
    normal = mean_summary([float(v) for v in range(1, 16)])  # 1..15: mean 8, sd sqrt(20), t(0.975, 14) = 2.1448
    assert normal.note == "" and normal.n == 15 and normal.mean == 8.0
    assert normal.ci == pytest.approx((5.52341365675266, 10.476586343247341), rel=1e-12)
    assert normal.p_value == pytest.approx(7.002171827322289e-06, rel=1e-9) and normal.significant
    for bad in ([[1.0, 2.0]], [1.0, math.nan]):
        with pytest.raises(ValueError, match="values must be"):
            mean_summary(bad)
    with pytest.raises(ValueError, match="min_n must be >= 2"):
        mean_summary([1.0, 2.0], min_n=1)


def test_three_identical_deals_claim_no_certainty_in_the_result_and_table():
    from training.evaluation.match import summarize_pair
    from training.evaluation.stats import wilson_interval

    r = summarize_pair([-1.0, -1.0, -1.0], [0.0, 0.0, 0.0], agent_a="ismcts", agent_b="heuristic", game="german_whist", hands=6)
    assert r.points_per_hand == -1.0 and r.interval_note == "too few deals (3 < 15)"
    assert all(math.isnan(x) for x in (*r.points_per_hand_ci, r.p_value)) and not r.significant
    assert r.win_rate == 0.0 and r.win_rate_ci == wilson_interval(0.0, 3)
    assert (round(r.win_rate_ci[0], 4), round(r.win_rate_ci[1], 4)) == (0.0, 0.5615)
    row = format_table([r]).splitlines()[2].split()
    assert "-1.000 [too few deals (3 < 15)]" in format_table([r]) and row[-2:] == ["n/a", "n/a"]
    d = r.to_dict()
    assert d["points_per_hand_ci"] == [None, None] and d["p_value"] is None and d["interval_note"] == "too few deals (3 < 15)"
    one = summarize_pair([0.5], [1.0], agent_a="a", agent_b="b", game="classic_whist", hands=2)
    assert one.interval_note == "too few deals (1 < 15)" and one.win_rate_ci == wilson_interval(1.0, 1)


def test_fifteen_deals_get_t_intervals_and_a_test():
    from training.evaluation.match import summarize_pair

    diffs = [1, -1, 2, 0, 1, 3, -2, 1, 0, 2, 1, -1, 2, 1, 0]
    wins = [1.0, 0.0, 1.0, 0.5, 1.0, 1.0, 0.0, 0.5, 0.5, 1.0, 0.5, 0.0, 1.0, 1.0, 0.5]
    r = summarize_pair(diffs, wins, agent_a="a", agent_b="b", game="classic_whist", hands=30)
    assert r.interval_note == "" and r.deals == 15
    assert r.points_per_hand == pytest.approx(2 / 3)
    assert r.points_per_hand_ci == pytest.approx((-0.07827218795297641, 1.4116055212863097), rel=1e-12)
    assert r.p_value == pytest.approx(0.07554540544188022, rel=1e-9) and not r.significant
    # win rate: t-interval of the shares (mean 0.6333, sd 0.3994, t(0.975, 14) = 2.1448), within [0, 1]
    assert r.win_rate == pytest.approx(19 / 30)
    assert r.win_rate_ci == pytest.approx((0.41215059420482647, 0.8545160724618401), rel=1e-12)
    table = format_table([r])
    assert "+0.667 [-0.078, +1.412]" in table and "0.076" in table.splitlines()[2]


def test_cli_eval_of_three_deals_claims_no_significance(capsys, eval_only_cli):
    """The reported case: three deals of IS-MCTS against the heuristic in German Whist."""
    assert cli.main(["eval", "--game", "german_whist", "--agents", "ismcts:iters=20", "heuristic", "--deals", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    row = out.splitlines()[2]
    assert "[too few deals (3 < 15)]" in row and row.split()[-2:] == ["n/a", "n/a"]
    assert "<1e-4" not in out and "yes" not in row


# ------------------------------------------------------------------------------ Ctrl-C keeps the finished deals
class StopAt:
    """Plays like ``inner`` and raises KeyboardInterrupt (as Ctrl-C does) at its ``n``-th decision."""

    def __init__(self, inner, n):
        self.inner, self.n, self.calls = inner, n, 0
        self.name = getattr(inner, "name", type(inner).__name__)

    def reseed(self, seed):
        reseed = getattr(self.inner, "reseed", None)
        if reseed is not None:
            reseed(seed)

    def act(self, observation, info_state=None):
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt
        return self.inner.act(observation, info_state)


#: Decisions of the heuristic in one duplicate deal of Classic Whist: 26 cards a play, two plays.
PER_DEAL = 52


def test_interrupted_match_keeps_the_finished_deals():
    from training.evaluation.match import MatchInterrupted

    with pytest.raises(MatchInterrupted) as stopped:
        evaluate_pair("classic_whist", StopAt(ClassicHeuristicAgent(), 3 * PER_DEAL + 1), RandomAgent(seed=0), 10, seed=2)
    partial = stopped.value.result
    assert isinstance(stopped.value, KeyboardInterrupt)
    assert (partial.deals, partial.deals_requested, partial.complete) == (3, 10, False)
    assert (partial.games, partial.hands) == (6, 6)
    assert (partial.win_rate, partial.points_per_hand) == (0.5, 1.5)  # the first 3 deals: 3 of 6 hands won, +9 points
    three = evaluate_pair("classic_whist", ClassicHeuristicAgent(), RandomAgent(seed=0), 3, seed=2)
    assert three.complete and three.deals_requested == 3
    same = ("win_rate", "win_rate_ci", "points_per_hand", "hands", "games", "interval_note")
    assert {k: getattr(partial, k) for k in same} == {k: getattr(three, k) for k in same}


def _stopping_registry(monkeypatch, n):
    from agents import registry

    real = registry.make_agent

    def make_agent(spec, game, seed=None):
        agent = real(spec, game, seed)
        return StopAt(agent, n) if spec == "heuristic" else agent

    monkeypatch.setattr(registry, "make_agent", make_agent)


def test_cli_eval_ctrl_c_prints_and_saves_the_finished_deals(tmp_path, capsys, monkeypatch, eval_only_cli):
    _stopping_registry(monkeypatch, 3 * PER_DEAL + 1)
    out = tmp_path / "eval"
    code = cli.main(["eval", "--agents", "heuristic", "random", "--deals", "10", "--seed", "2", "--out", str(out), "--quiet"])
    assert code == 130
    printed = capsys.readouterr()
    lines = printed.out.splitlines()
    assert lines[2].split()[:4] == ["heuristic", "random", "classic_whist", "3"] and " 3 of 10 " in lines[2]
    assert lines[3] == "INCOMPLETE: heuristic vs random: 3 of 10 deals (interrupted; the row covers the deals played)"
    last = printed.err.strip().splitlines()[-1]
    assert last == (f"whist eval: interrupted: 0 of 1 matches finished; heuristic vs random stopped after 3 of 10 deals "
                    f"(the table above, marked INCOMPLETE); results.json and results.csv in {out} say so (\"complete\": false)")
    (data,) = json.loads((out / "results.json").read_text())
    three = evaluate_pair("classic_whist", ClassicHeuristicAgent(), RandomAgent(), 3, seed=2)  # reseeded before every play
    assert (data["complete"], data["deals"], data["deals_requested"], data["hands"]) == (False, 3, 10, 6)
    assert (data["win_rate"], data["points_per_hand"]) == (three.win_rate, three.points_per_hand) == (0.5, 1.5)
    (row,) = csv.DictReader((out / "results.csv").read_text().splitlines())
    assert (row["complete"], row["deals"], row["deals_requested"]) == ("False", "3", "10")
    assert not list(out.glob(".*.tmp"))  # written whole, through a renamed temporary file


def test_cli_eval_ctrl_c_in_a_later_match_keeps_the_earlier_ones(tmp_path, capsys, monkeypatch, eval_only_cli):
    _stopping_registry(monkeypatch, 4 * PER_DEAL + 2 * PER_DEAL + 1)  # 4 deals of the first match, 2 of the second
    out = tmp_path / "eval"
    assert cli.main(["eval", "--agents", "heuristic", "random", "random", "--deals", "4", "--out", str(out), "--quiet"]) == 130
    printed = capsys.readouterr()
    assert "INCOMPLETE: heuristic vs random#2: 2 of 4 deals" in printed.out
    assert printed.err.strip().splitlines()[-1].startswith("whist eval: interrupted: 1 of 3 matches finished; "
                                                          "heuristic vs random#2 stopped after 2 of 4 deals")
    data = json.loads((out / "results.json").read_text())
    assert [(d["agent_b"], d["deals"], d["deals_requested"], d["complete"]) for d in data] == \
        [("random", 4, 4, True), ("random#2", 2, 4, False)]


# ------------------------------------------------------------------------------ plays cut by max_hands
def test_a_truncated_play_has_no_winner_but_its_points_count():
    from training.evaluation.match import PlayOutcome, deal_values

    won = PlayOutcome(side_a=0, points=(3, 1), hands=2)
    cut = PlayOutcome(side_a=1, points=(0, 0), hands=200, truncated=True)
    # points: (3 - 1) + (0 - 0) over 202 hands; win share: the one play that ended, won
    assert deal_values([won, cut], 2) == (2 / 202, 1.0, 202)
    diff, share, hands = deal_values([cut, PlayOutcome(side_a=0, points=(2, 5), hands=3, truncated=True)], 2)
    assert (diff, hands) == (-3 / 203, 203) and math.isnan(share)
    # three sides: A (side 2) beats one of the two others in the play that ended
    assert deal_values([PlayOutcome(2, (1, 4, 3), 1), PlayOutcome(0, (9, 0, 0), 5, truncated=True)], 3) == \
        (((2 * 3 - 5) + (2 * 9 - 0)) / (2 * 6), 2 / 4, 6)


def test_summarize_pair_leaves_deals_without_a_finished_play_out_of_the_win_rate():
    from training.evaluation.match import summarize_pair
    from training.evaluation.stats import wilson_interval

    r = summarize_pair([1.0, 0.0, -1.0], [1.0, math.nan, 0.5], agent_a="a", agent_b="b", game="classic_whist", hands=6,
                       truncated=2)
    assert (r.deals, r.truncated, r.points_per_hand) == (3, 2, 0.0)
    assert r.win_rate == 0.75 and r.win_rate_ci == wilson_interval(0.75, 2)
    none = summarize_pair([0.0, 0.0], [math.nan, math.nan], agent_a="a", agent_b="b", game="classic_whist", hands=400)
    assert math.isnan(none.win_rate) and all(math.isnan(x) for x in none.win_rate_ci)
    assert none.to_dict()["win_rate"] is None


def test_game_plays_cut_by_max_hands_are_counted_apart_not_as_ties():
    # Classic Whist to 5 points cut after one hand: 6 of the 8 plays end no game. What each play scored
    # (A's side first): deal 0: 5:0 won, 2:0 cut; deal 1: 1:0 cut, 3:0 cut; deal 2: 0:4 cut, 6:0 won;
    # deal 3: 2:0 cut, 0:1 cut. Only deals 0 and 2 have a play that ended, both won by A.
    seen = []
    r = evaluate_pair("classic_whist", ClassicHeuristicAgent(), RandomAgent(seed=0), 4, seed=5,
                      options={"episode": "game", "max_hands": 1}, on_deal=seen.append)
    assert [[(p.side_a, p.points, p.truncated) for p in o.plays] for o in seen] == [
        [(0, (5, 0), False), (1, (0, 2), True)],
        [(0, (1, 0), True), (1, (0, 3), True)],
        [(0, (0, 4), True), (1, (0, 6), False)],
        [(0, (2, 0), True), (1, (1, 0), True)],
    ]
    assert (r.deals, r.games, r.hands, r.truncated) == (4, 8, 8, 6)
    from training.evaluation.stats import wilson_interval

    assert r.win_rate == 1.0 and r.win_rate_ci == wilson_interval(1.0, 2)
    assert r.points_per_hand == 1.75  # (7/2 + 4/2 + 2/2 + 1/2) / 4: cut plays' points still count
    lines = format_table([r]).splitlines()
    assert lines[0].split()[:6] == ["agent", "A", "agent", "B", "game", "deals"] and "  truncated  " in lines[0]
    assert lines[2].split()[3:8] == ["4", "8", "6", "of", "8"] and "100.0% [34.2, 100.0]" in lines[2]
    assert lines[3] == ("TRUNCATED: heuristic vs random: 6 of 8 plays cut at max_hands=1 before their episode ended; "
                        "no winner, so left out of the win rate (their hands count in points/hand)")


def test_revoke_mode_hands_annulled_by_random_play_are_reported_as_truncated():
    # With allow_revoke the random player's mask is its whole hand: it revokes, the revoke is
    # established, the hand is annulled (its side's score, 0 at the start of a hand episode, stays
    # 0) and redealt, which never ends a hand episode (RULES.md §2.9), until max_hands cuts it.
    seen = []
    r = evaluate_pair("classic_whist", ClassicHeuristicAgent(), RandomAgent(seed=0), 3, seed=5,
                      options={"allow_revoke": True, "max_hands": 4}, on_deal=seen.append)
    assert [(p.points, p.hands, p.truncated) for o in seen for p in o.plays] == [((0, 0), 4, True)] * 6
    assert (r.deals, r.games, r.hands, r.truncated, r.points_per_hand) == (3, 6, 24, 6, 0.0)
    assert math.isnan(r.win_rate) and all(math.isnan(x) for x in r.win_rate_ci)  # not 50% of ties
    lines = format_table([r]).splitlines()
    assert lines[2].split()[3:9] == ["3", "24", "6", "of", "6", "n/a"]
    assert lines[3] == ("TRUNCATED: heuristic vs random: 6 of 6 plays cut at max_hands=4 before their episode ended; "
                        "no winner, so left out of the win rate (their hands count in points/hand); with allow_revoke a "
                        "hand annulled by a revoke is redealt and does not end the episode (RULES.md §2.9)")
    # the heuristic never revokes: against itself every hand is scored and ends its episode
    same = evaluate_pair("classic_whist", ClassicHeuristicAgent(), ClassicHeuristicAgent(), 3, seed=5,
                         options={"allow_revoke": True, "max_hands": 4})
    assert (same.truncated, same.hands, same.win_rate) == (0, 6, 0.5)
    assert "truncated" not in format_table([same]) and "TRUNCATED" not in format_table([same])


def test_cli_eval_reports_truncated_plays(tmp_path, capsys, eval_only_cli):
    out = tmp_path / "eval"
    assert cli.main(["eval", "--agents", "heuristic", "random", "--deals", "3", "--seed", "5", "--option", "allow_revoke=true",
                     "--option", "max_hands=4", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[3].startswith("TRUNCATED: heuristic vs random: 6 of 6 plays cut at max_hands=4 before their episode ended")
    (data,) = json.loads((out / "results.json").read_text())
    assert (data["truncated"], data["games"], data["hands"], data["win_rate"], data["win_rate_ci"]) == (6, 6, 24, None, [None, None])
    (row,) = csv.DictReader((out / "results.csv").read_text().splitlines())
    assert (row["truncated"], row["games"], row["win_rate"]) == ("6", "6", "")


# ------------------------------------------------------------------------------ memory does not grow with the deal count
def test_deal_indices_are_drawn_lazily():
    from training.evaluation.match import DealIndices

    todo = DealIndices(3_000_000, skip={1, 3, 5_000_000})
    assert len(todo) == 2_999_998 and list(itertools.islice(todo, 4)) == [0, 2, 4, 5]
    assert list(DealIndices(4)) == [0, 1, 2, 3] and len(DealIndices(4, skip={-1, 4})) == 4


class _Enough(Exception):
    """Raised by ``on_deal`` to stop a match after a few deals."""


def test_a_huge_deal_count_allocates_nothing_per_deal_up_front():
    import tracemalloc

    seen = []

    def stop_after_three(outcome):
        seen.append(outcome.index)
        if len(seen) == 3:
            raise _Enough

    a, b = RandomAgent(seed=0), RandomAgent(seed=1)
    evaluate_pair("classic_whist", a, b, 3, seed=0)  # imports and first-use caches, outside the measure
    tracemalloc.start()
    try:
        with pytest.raises(_Enough):
            # a list of 3,000,000 deal indices alone would take about 100 MB
            evaluate_pair("classic_whist", a, b, 3_000_000, seed=0, on_deal=stop_after_three, skip_deals={1})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seen == [0, 2, 3]
    assert peak < 5_000_000


def test_worker_processes_draw_the_deal_indices_as_they_go():
    from training.evaluation.match import DealPlayer
    from training.evaluation.parallel import QUEUED_PER_WORKER, played_units

    class Indices:
        """A sized iterable of a trillion indices that fails if more than 50 are drawn."""

        def __init__(self):
            self.drawn = 0

        def __len__(self):
            return 10**12

        def __iter__(self):
            for i in range(10**12):
                self.drawn += 1
                assert self.drawn <= 50, "drawn far ahead of the results"
                yield i

    player = DealPlayer("classic_whist", {"episode": "hand"}, RandomAgent(seed=0), RandomAgent(seed=1), ("a", "b"),
                        seed=0, duplicate=True, records=False)
    indices = Indices()
    with played_units(player, indices, 2) as outcomes:
        got = [outcome.index for outcome, _ in itertools.islice(outcomes, 3)]
    assert got == [0, 1, 2]
    assert indices.drawn == 3 + (QUEUED_PER_WORKER + 1) * 2  # one drawn per result read, a window ahead
