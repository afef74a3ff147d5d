"""``whist plot`` figures: each writes a non-empty PNG from small synthetic data."""

from __future__ import annotations

import math

import pytest

from training.cli import main
from training.evaluation.match import DealOutcome, PlayOutcome, summarize_pair
from training.evaluation.ratings import AgentRating, Leaderboard
from training.evaluation.store import ResultsStore
from training.viewers.plots import (
    bid_accuracy,
    plot_bid_accuracy,
    plot_learning_curve,
    plot_ratings,
    plot_win_rate_heatmap,
    read_eval_scalars,
)
from whist_env.records import write_records

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _is_png(path) -> bool:
    data = path.read_bytes()
    return len(data) > 1000 and data.startswith(PNG_MAGIC)


def _board() -> Leaderboard:
    pairs = [
        summarize_pair([1.0, 2.0, 1.5], [0.75, 1.0, 0.5], agent_a="heuristic", agent_b="random", game="classic_whist", hands=6, games=6),
        summarize_pair([0.5, -0.5, 0.0], [0.5, 0.25, 0.5], agent_a="heuristic", agent_b="ppo", game="classic_whist", hands=6, games=6),
    ]
    ratings = [AgentRating("heuristic", 30.0, 3.0, 21.0, 6, 5, 1, 0), AgentRating("ppo", 26.0, 4.0, 14.0, 3, 1, 1, 1),
               AgentRating("random", 20.0, 3.5, 9.5, 3, 0, 0, 3)]
    return Leaderboard(game="classic_whist", options={"episode": "hand"}, ratings=ratings, pairs=pairs, deals=6)


def test_heat_map_and_ratings(tmp_path):
    board = _board()
    names, rate, _, _ = board.win_rate_matrix()
    assert names == ["heuristic", "ppo", "random"] and math.isnan(rate[1, 2])  # ppo never met random
    heat = plot_win_rate_heatmap(board, tmp_path / "a" / "heat.png")
    ratings = plot_ratings(board, tmp_path / "ratings.png")
    assert heat == tmp_path / "a" / "heat.png" and _is_png(heat)
    assert _is_png(ratings)
    with pytest.raises(ValueError):
        plot_ratings(Leaderboard(game="classic_whist", options={}), tmp_path / "empty.png")


def _write_log(run_dir, offset: float, with_ci: bool = False) -> None:
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(run_dir)) as w:
        for i in range(6):
            step = 500 * (i + 1)
            value = offset + 0.3 * i + (0.2 if i % 2 else -0.2)
            w.add_scalar("eval/heuristic/points_per_hand", value, step)
            w.add_scalar("eval/heuristic/win_rate", 0.4 + 0.02 * i, step)
            if with_ci:
                w.add_scalar("eval/heuristic/points_per_hand_ci_low", value - 0.5, step)
                w.add_scalar("eval/heuristic/points_per_hand_ci_high", value + 0.5, step)
            w.add_scalar("charts/episode_return", 1.0, step)


def test_learning_curve(tmp_path):
    _write_log(tmp_path / "runs" / "a", 0.0)
    _write_log(tmp_path / "runs" / "b", -1.0)
    _write_log(tmp_path / "ci", 0.0, with_ci=True)
    scalars = read_eval_scalars([tmp_path / "runs" / "a"])
    (run,) = scalars["heuristic"].values()
    assert run["step"].tolist() == [500, 1000, 1500, 2000, 2500, 3000] and "low" not in run
    assert "low" in next(iter(read_eval_scalars([tmp_path / "ci"])["heuristic"].values()))
    for name, dirs in {"one": [tmp_path / "runs" / "a"], "two": [tmp_path / "runs"], "ci": [tmp_path / "ci"]}.items():
        assert _is_png(plot_learning_curve(dirs, tmp_path / f"{name}.png"))
    with pytest.raises(ValueError, match="no eval/"):
        plot_learning_curve([tmp_path / "runs"], tmp_path / "x.png", suffix="nothing")
    with pytest.raises(FileNotFoundError):
        plot_learning_curve([tmp_path / "missing"], tmp_path / "x.png")


def _romanian_record(bids: dict[int, dict[str, int]], winners: dict[int, list[str]]) -> dict:
    seats = ["player_0", "player_1", "player_2", "player_3"]
    hands, actions = [], []
    for h, (k, trick_winners) in enumerate(winners.items()):
        hands.append({"hand_number": h, "deal": {"hands": {a: ["2C"] * k for a in seats}, "dealer": "player_3"},
                      "tricks": [{"leader": "player_0", "winner": w, "cards": {}} for w in trick_winners],
                      "points": {}, "scores": {}})
        for a, b in bids[k].items():
            actions.append({"step": len(actions), "agent": a, "action": 0, "label": f"bid:{b}", "phase": "bid", "hand_number": h})
    return {"schema": "whist-env/game-record", "version": 1, "game": "romanian_whist", "options": {}, "seed": 0,
            "players": {"player_0": "heuristic", "player_1": "random", "player_2": "heuristic", "player_3": "random"},
            "hands": hands, "actions": actions, "result": None}


def test_bid_accuracy_counts_and_plot(tmp_path):
    record = _romanian_record(
        bids={1: {"player_0": 1, "player_1": 0, "player_2": 1, "player_3": 0},
              2: {"player_0": 2, "player_1": 0, "player_2": 0, "player_3": 1}},
        winners={1: ["player_0"], 2: ["player_0", "player_3"]},
    )
    counts = bid_accuracy([record, {"game": "classic_whist"}])
    assert counts == {"heuristic": {1: (1, 2), 2: (1, 2)}, "random": {1: (2, 2), 2: (2, 2)}}
    assert _is_png(plot_bid_accuracy([record], tmp_path / "bids.png"))
    with pytest.raises(ValueError, match="no Romanian"):
        plot_bid_accuracy([], tmp_path / "none.png")


def test_bid_accuracy_from_played_records(tmp_path):
    from agents.random_agent import RandomAgent
    from whist_env import romanian_whist_v0
    from whist_env.records import record_episode

    agents = romanian_whist_v0.raw_env().possible_agents
    rec = record_episode(romanian_whist_v0, "romanian_whist", {}, 1, None, {a: RandomAgent(seed=i) for i, a in enumerate(agents)})
    counts = bid_accuracy([rec])
    assert sum(n for per in counts.values() for _, n in per.values()) == 4 * rec["result"]["hands_played"]
    assert set().union(*counts.values()) == {1, 2, 3, 4, 5, 6, 7, 8}


def test_plot_command(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        a, b = store.agent_id("heuristic", "heuristic"), store.agent_id("random", "random")
        m = store.match_id("classic_whist", {"episode": "hand"}, 0, a, b, True, [[a, b, a, b], [b, a, b, a]])
        for i, pts in enumerate([((5, 0), (1, 2)), ((2, 0), (0, 3)), ((0, 1), (1, 0))]):
            store.add_deal(m, DealOutcome(i, i, tuple(PlayOutcome(k, p, 1) for k, p in enumerate(pts))))
    _write_log(tmp_path / "run", 0.0)
    records = write_records([_romanian_record({1: {"player_0": 1, "player_1": 0, "player_2": 0, "player_3": 0}},
                                              {1: ["player_0"]})], tmp_path / "games.jsonl")
    out = tmp_path / "plots"
    assert main(["plot", "--db", str(db), "--logdir", str(tmp_path / "run"), "--records", str(records), "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["bid_accuracy.png", "learning_curve.png", "ratings_classic_whist.png", "winrate_heatmap_classic_whist.png"]
    assert all(_is_png(out / n) for n in names)
    assert "wrote" in capsys.readouterr().out
    assert main(["plot", "--db", str(tmp_path / "missing.sqlite"), "--out", str(out)]) == 2


LONG = "checkpoint:runs/classic_default/checkpoints/final.pt@e0f5e1fb"


def test_short_labels_of_checkpoint_agents():
    from training.viewers.plots import LABEL_WIDTH, short_label, short_labels

    assert short_label(LONG) == "ckpt:classic_default/final@e0f5e1fb"
    assert short_label("heuristic") == "heuristic"
    deep = "checkpoint:/home/me/experiments/a/very/long/path/run_with_a_long_name/checkpoints/step_000123456.pt@deadbeef"
    label = short_label(deep)
    assert len(label) <= LABEL_WIDTH and label.startswith("ckpt:") and label.endswith("@deadbeef") and "…" in label
    two = short_labels(["checkpoint:runs/x/final.pt@11", "checkpoint:runs/y/x/final.pt@11"])
    assert len(set(two)) == 2


def _image_size(path):
    from matplotlib.image import imread

    height, width = imread(path).shape[:2]
    return width, height


def test_heat_map_of_many_checkpoint_agents_fits_its_labels(tmp_path, monkeypatch):
    import itertools

    from matplotlib.figure import Figure

    names = [f"checkpoint:runs/classic_run{k}/checkpoints/final.pt@{k:08x}" for k in range(6)] + ["heuristic", "random"]
    pairs = [summarize_pair([0.5, -0.25, 1.0], [0.5, 0.25, 1.0], agent_a=a, agent_b=b, game="classic_whist", hands=6, games=6)
             for a, b in itertools.combinations(names, 2)]
    ratings = [AgentRating(n, 30.0 - k, 3.0, 21.0 - k, 6, 3, 1, 2) for k, n in enumerate(names)]
    board = Leaderboard(game="classic_whist", options={"episode": "hand"}, ratings=ratings, pairs=pairs, deals=6)
    with _no_layout_warning():
        heat = plot_win_rate_heatmap(board, tmp_path / "heat.png")
        ratings_png = plot_ratings(board, tmp_path / "ratings.png")
    small = plot_win_rate_heatmap(_board(), tmp_path / "small.png")
    assert _is_png(heat) and _is_png(ratings_png)
    assert _image_size(heat)[0] > _image_size(small)[0] and _image_size(heat)[1] > _image_size(small)[1]  # sized to the agents
    # the labels drawn are the short ones
    import training.viewers.plots as plots

    seen = []
    original = plots._save

    def spy(fig: Figure, path):
        seen.extend(t.get_text() for ax in fig.axes for t in ax.get_yticklabels())
        return original(fig, path)

    monkeypatch.setattr(plots, "_save", spy)
    plot_win_rate_heatmap(board, tmp_path / "again.png")
    assert "ckpt:classic_run0/final@00000000" in seen and not any(t.startswith("checkpoint:") for t in seen)


class _no_layout_warning:
    """Fails on matplotlib's "constrained_layout not applied" warning (labels overlapping the cells)."""

    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings(record=True)
        self.caught = self._catch.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)
        problems = [str(w.message) for w in self.caught if "layout" in str(w.message)]
        assert not problems, problems
        return False


def test_learning_curve_of_a_run_without_evaluation_draws_the_training_curve(tmp_path, capsys, monkeypatch):
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path / "short")) as w:  # what `whist train --total-steps 4096` logs
        for step in (2048, 4096):
            w.add_scalar("charts/episode_return", 0.0, step)
            w.add_scalar("losses/policy_loss", 0.1, step)
    import training.viewers.plots as plots

    titles = []
    original = plots._save

    def spy(fig, path):
        titles.extend(ax.get_title() for ax in fig.axes)
        return original(fig, path)

    monkeypatch.setattr(plots, "_save", spy)
    assert main(["plot", "--logdir", str(tmp_path / "short"), "--out", str(tmp_path / "plots")]) == 0
    assert _is_png(tmp_path / "plots" / "learning_curve.png")
    assert any("no evaluation points were logged" in t for t in titles)
    assert "wrote" in capsys.readouterr().out


def test_heat_map_title_gives_deals_per_pair_not_the_total():
    from training.viewers.plots import board_title

    board = _board()  # two pairs of 3 deals each, 6 in all
    assert board_title(board, per_pair=True) == "classic_whist, 3 duplicate deals per pair"
    assert board_title(board) == "classic_whist, 6 duplicate deals in all"
    board.pairs[1] = summarize_pair([0.5, -0.5], [0.5, 0.25], agent_a="heuristic", agent_b="ppo", game="classic_whist", hands=4, games=4)
    assert board_title(board, per_pair=True) == "classic_whist, 2–3 duplicate deals per pair"
