"""``whist curve`` (training/viewers/curves.py): a run's evaluations as CSV, each game's figure and table."""

from __future__ import annotations

import math

import pytest
import yaml
from torch.utils.tensorboard import SummaryWriter

from training.cli import main
from training.errors import CommandError
from training.evaluation.curves import curve_table, export_run, game_curves, opponents_of, read_curve
from training.evaluation.stats import wilson_interval


def fake_run(root, name="classic_scratch_s7", ci=True):
    """A run folder with config.yaml and two evaluations (steps 1,000 and 2,000)."""
    run = root / name
    run.mkdir()
    (run / "config.yaml").write_text(yaml.safe_dump({"game": "classic_whist", "eval": {"num_deals": 200}}))
    with SummaryWriter(str(run)) as w:
        for step, rate, hours in ((1000, 0.25, 0.5), (2000, 0.5, 1.0)):
            w.add_scalar("eval/heuristic/win_rate", rate, step)
            w.add_scalar("eval/random/win_rate", rate + 0.25, step)
            w.add_scalar("charts/cpu_hours", hours, step)
            if ci:
                w.add_scalar("eval/heuristic/win_rate_ci_low", rate - 0.125, step)
                w.add_scalar("eval/heuristic/win_rate_ci_high", rate + 0.125, step)
    return run


def test_a_run_is_exported_one_row_per_evaluation(tmp_path):
    out = export_run(fake_run(tmp_path), tmp_path / "curves")
    assert out == tmp_path / "curves" / "classic_whist" / "classic_scratch_s7.csv"
    assert out.read_text().splitlines() == [
        "# deals=200",
        "step,cpu_hours,heuristic_win_rate,heuristic_win_rate_ci_high,heuristic_win_rate_ci_low,random_win_rate",
        "1000,0.5000,0.2500,0.3750,0.1250,0.5000",
        "2000,1.0000,0.5000,0.6250,0.3750,0.7500",
    ]
    curve = read_curve(out)
    assert (curve.name, curve.game, curve.deals) == ("classic_scratch_s7", "classic_whist", 200)
    assert curve.column("step") == [1000.0, 2000.0]


def test_the_table_gives_each_runs_last_point_and_wilsons_interval_where_none_was_logged(tmp_path):
    export_run(fake_run(tmp_path), tmp_path / "curves")
    lo, hi = wilson_interval(0.75, 200)  # random's interval was not logged
    assert curve_table(game_curves("classic_whist", tmp_path / "curves")).splitlines()[2] == (
        f"| classic_scratch_s7 | 0.0M | 1.00 | 50.0% [37.5, 62.5] | 75.0% [{100 * lo:.1f}, {100 * hi:.1f}] |")
    low, high, logged = read_curve(tmp_path / "curves" / "classic_whist" / "classic_scratch_s7.csv").win_rate_band("random")
    assert not logged and math.isclose(low[-1], lo) and math.isclose(high[-1], hi)


def test_a_fine_tuning_run_shows_the_agent_it_started_from_as_well(tmp_path):
    """Opponents beyond the heuristic and random (a fine-tuning run's starting agent) come after
    them, in the table and the figure."""
    run = fake_run(tmp_path, name="classic_finetune_s1")
    with SummaryWriter(str(run)) as w:
        w.add_scalar("eval/zoo:classic_whist/win_rate", 0.55, 2000)
    export_run(run, tmp_path / "finetune")
    curves = game_curves("classic_whist", tmp_path / "finetune")
    assert opponents_of(curves) == ["heuristic", "random", "zoo:classic_whist"]
    table = curve_table(curves).splitlines()
    assert table[0].endswith("| vs zoo:classic_whist, win rate [95% CI] |") and table[1] == "|---|---:|---:|---|---|---|"
    lo, hi = wilson_interval(0.55, 200)
    assert table[2].endswith(f"| 55.0% [{100 * lo:.1f}, {100 * hi:.1f}] |")


def test_whist_curve_writes_the_csv_and_the_figure(tmp_path, capsys):
    run = fake_run(tmp_path)
    assert main(["curve", str(run), "--out", str(tmp_path / "curves"), "--plots", str(tmp_path / "plots")]) == 0
    png = tmp_path / "plots" / "classic_whist.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"drew {png}" in capsys.readouterr().out


def test_a_folder_that_is_not_a_run_or_has_no_evaluation_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["curve", str(tmp_path / "empty")]) == 2
    assert "is not a training run folder (no config.yaml)" in capsys.readouterr().err
    run = tmp_path / "quiet"
    run.mkdir()
    (run / "config.yaml").write_text("game: classic_whist\n")
    with pytest.raises(CommandError, match="no evaluation logged"):
        export_run(run, tmp_path / "curves")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.yaml").write_text("garbage: [\n")
    capsys.readouterr()
    assert main(["curve", str(broken)]) == 2
    err = capsys.readouterr().err
    assert f"{broken / 'config.yaml'}: not a readable YAML file" in err and "Traceback" not in err
    (tmp_path / "bad.csv").write_text("step,x\n")
    with pytest.raises(CommandError, match="not a learning-curve CSV"):
        read_curve(tmp_path / "bad.csv")


def test_a_figure_keeps_the_digest_of_the_csvs_it_was_drawn_from(tmp_path):
    from training.evaluation.curves import csv_digest
    from training.viewers.curves import figure_source, plot_game

    csv = export_run(fake_run(tmp_path), tmp_path / "curves")
    png = plot_game([read_curve(csv)], "Classic Whist", tmp_path / "c.png", source=csv_digest([csv]))
    assert figure_source(png) == csv_digest([csv])
    csv.write_text(csv.read_text().replace("0.2500", "0.2600"))
    assert figure_source(png) != csv_digest([csv])  # the figure is stale once the data changes
    assert figure_source(tmp_path / "missing.png") is None
