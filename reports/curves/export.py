"""Write the in-training evaluations of a run folder as CSV (one row per evaluation step).

    python reports/curves/export.py RUN_DIR OUT.csv

Columns: ``step`` (environment steps, all seats), ``cpu_hours`` (the run's CPU time at that
update, in-training evaluations included), then for each opponent ``<opponent>_win_rate``,
``<opponent>_points_per_hand`` and its 95% interval. Read from the run's tensorboard event files
(a resumed run's writer purges what the stopped one logged after its checkpoint).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def export(run_dir: Path, out: Path) -> int:
    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    tags = sorted(t for t in acc.Tags()["scalars"] if t.startswith("eval/"))
    cpu = {e.step: e.value for e in acc.Scalars("charts/cpu_hours")} if "charts/cpu_hours" in acc.Tags()["scalars"] else {}
    rows: dict[int, dict[str, float]] = {}
    for tag in tags:
        for event in acc.Scalars(tag):
            rows.setdefault(event.step, {})[tag[len("eval/"):].replace("/", "_")] = event.value
    columns = sorted({k for r in rows.values() for k in r})
    with out.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["step", "cpu_hours", *columns])
        for step in sorted(rows):
            writer.writerow([step, f"{cpu.get(step, float('nan')):.4f}", *(f"{rows[step].get(c, float('nan')):.4f}" for c in columns)])
    return len(rows)


if __name__ == "__main__":
    print(export(Path(sys.argv[1]), Path(sys.argv[2])), "evaluations written")
