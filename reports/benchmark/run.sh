#!/usr/bin/env bash
# The committed benchmark reports: heuristic, zoo:GAME and pimc under the protocol, every game,
# cheapest pimc games first. Every deal is stored in runs/benchmark.sqlite as played, so running
# this again resumes; then `whist benchmark-page` rebuilds docs/benchmarks.md from the reports.
# Usage: bash reports/benchmark/run.sh [WORKERS]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
workers="${1:-1}"
export OMP_NUM_THREADS=1
for game in romanian_whist minnesota_whist classic_whist cutthroat_whist german_whist bid_whist; do
  for spec in heuristic "zoo:$game" pimc; do
    whist benchmark "$spec" --game "$game" --out "reports/benchmark/$game" --db runs/benchmark.sqlite \
      --workers "$workers" > /dev/null
    echo "$(date -u +%FT%TZ) done: $spec $game"
  done
done
whist benchmark-page reports/benchmark --out docs/benchmarks.md
python docs/generate.py   # the game pages show the same tables
