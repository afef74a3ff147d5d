#!/usr/bin/env bash
# The committed benchmark reports: heuristic, zoo:GAME and pimc under the protocol, every game,
# cheapest pimc games first. Every deal is stored in runs/benchmark.sqlite as played, so running
# this again resumes; a copy of that store is kept in reports/benchmark/deals.sqlite (written with
# SQLite's backup API after every report, so it is never half-written) and seeds runs/ on a new
# checkout, so the run also resumes on another machine. A report already complete is not run again.
# Then `whist benchmark-page` rebuilds docs/benchmarks.md from the reports.
# Usage: bash reports/benchmark/run.sh [WORKERS]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
workers="${1:-1}"
export OMP_NUM_THREADS=1
db=runs/benchmark.sqlite
copy=reports/benchmark/deals.sqlite
snapshot() {  # $1 -> $2, consistent even while $1 is open
  python - "$1" "$2" <<'PY'
import os, sqlite3, sys
src, dst = sys.argv[1], sys.argv[2]
tmp = dst + ".tmp"
if os.path.exists(tmp):
    os.remove(tmp)
with sqlite3.connect(src) as s, sqlite3.connect(tmp) as d:
    s.backup(d)
d.close()
os.replace(tmp, dst)
PY
}
complete() {  # $1 spec, $2 game: is its report in reports/benchmark/GAME complete under the protocol?
  python - "$1" "$2" <<'PY'
import json, sys
from pathlib import Path
from agents.registry import canonical_spec
from training.evaluation.benchmark import PROTOCOL, report_name
spec, game = sys.argv[1], sys.argv[2]
path = Path("reports/benchmark") / game / (report_name(canonical_spec(spec, game)) + ".json")
ok = path.exists() and (r := json.loads(path.read_text()))["complete"] and r["protocol"]["version"] == PROTOCOL.version
sys.exit(0 if ok else 1)
PY
}
if [ ! -e "$db" ] && [ -e "$copy" ]; then mkdir -p runs && snapshot "$copy" "$db"; fi
for game in romanian_whist minnesota_whist classic_whist cutthroat_whist german_whist bid_whist; do
  for spec in heuristic "zoo:$game" pimc; do
    if complete "$spec" "$game"; then echo "complete already: $spec $game"; continue; fi
    whist benchmark "$spec" --game "$game" --out "reports/benchmark/$game" --db "$db" \
      --workers "$workers" --quiet > /dev/null
    snapshot "$db" "$copy"
    echo "$(date -u +%FT%TZ) done: $spec $game"
  done
done
whist benchmark-page reports/benchmark --out docs/benchmarks.md
python docs/generate.py   # the game pages show the same tables
