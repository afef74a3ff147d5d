#!/usr/bin/env bash
# The committed benchmark reports: heuristic, zoo:GAME and pimc under the protocol, every
# registered game. Every deal is stored in runs/benchmark.sqlite as played, so running this again
# resumes; a copy of that store is kept in reports/benchmark/deals.sqlite (written with SQLite's
# backup API every SNAPSHOT_SECONDS, default 600, while a report plays and again when it ends, so
# it is never half-written and a run killed mid-report loses at most that much play) and seeds
# runs/ on a new checkout, so the run also resumes on another machine once the copy is committed.
# A report already complete, for the current env version and the agents' current files, is not
# run again.
# Then `whist benchmark-page` rebuilds docs/benchmarks.md from the reports.
# Usage: bash reports/benchmark/run.sh [WORKERS [GAME...]]   (from the repository root; no GAME: every game)
set -euo pipefail
cd "$(dirname "$0")/../.."
workers="${1:-1}"
shift $(( $# > 0 ? 1 : 0 ))
if ! [[ "$workers" =~ ^[1-9][0-9]*$ ]]; then echo "WORKERS must be an int >= 1, got '$workers' (usage: run.sh [WORKERS [GAME...]])" >&2; exit 2; fi
every="${SNAPSHOT_SECONDS:-600}"
export OMP_NUM_THREADS=1
db=runs/benchmark.sqlite
copy=reports/benchmark/deals.sqlite
snapshot() {  # $1 -> $2 (a self-contained file, no write-ahead log), consistent even while $1 is open
  python - "$1" "$2" <<'PY'
import os, sqlite3, sys
src, dst = sys.argv[1], sys.argv[2]
tmp = dst + ".tmp"
for leftover in (tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal"):
    if os.path.exists(leftover):
        os.remove(leftover)
with sqlite3.connect(src) as s, sqlite3.connect(tmp) as d:
    s.backup(d)
    d.execute("PRAGMA journal_mode=DELETE")
d.close()
os.replace(tmp, dst)
PY
}
refresh_copy() {  # snapshot every $every seconds until the file $1 exists or this script is gone
  local last=$SECONDS
  while [ ! -e "$1" ] && kill -0 $$ 2>/dev/null; do
    sleep 5
    if (( SECONDS - last >= every )) && [ ! -e "$1" ]; then snapshot "$db" "$copy"; last=$SECONDS; fi
  done
}
copy_is_covered() {  # does $db hold every deal of $copy (by the matches' natural keys)?
  python - "$db" "$copy" <<'PY'
import os, shutil, sys, tempfile
from training.evaluation.store import ResultsStore

def deals(path):
    with ResultsStore(path) as store:
        agents = store.agents()
        who = lambda i: (agents[i].name, agents[i].kind, agents[i].checkpoint_sha256)
        return {(m.game, m.env_version, m.options_json, m.seed, who(m.agent_a), who(m.agent_b), m.duplicate):
                store.stored_deals(m.id) for m in store.matches(all_versions=True)}

db, copy = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:  # the committed copy is read from a copy (opening a store may upgrade it)
    shutil.copy(copy, os.path.join(tmp, "copy.sqlite"))
    have, want = deals(db), deals(os.path.join(tmp, "copy.sqlite"))
missing = sum(len(d - have.get(k, set())) for k, d in want.items())
if missing:
    print(f"{copy} holds {missing} deals that {db} lacks: move {db} away (the copy then seeds it) or merge them first",
          file=sys.stderr)
    sys.exit(1)
PY
}
complete() {  # $1 spec, $2 game: is its report complete under the protocol, the env version and the agents' files of now?
  python - "$1" "$2" <<'PY'
import json, sys
from pathlib import Path
from agents.registry import canonical_spec
from training.evaluation.benchmark import PROTOCOL, report_name
from training.evaluation.store import agent_identity
from whist_env.versions import env_version
spec, game = sys.argv[1], sys.argv[2]
path = Path("reports/benchmark") / game / (report_name(canonical_spec(spec, game)) + ".json")
if not path.exists():
    sys.exit(1)
r = json.loads(path.read_text())
ok = (r["complete"] and r["protocol"]["version"] == PROTOCOL.version and r["env_version"] == env_version(game)
      and r["agent"]["sha256"] == agent_identity(spec, game)[1]
      and all(e["sha256"] == agent_identity(e["spec"], game)[1] for e in r["rungs"]))
sys.exit(0 if ok else 1)
PY
}
games="${*:-$(python -c "import whist_env; print(' '.join(whist_env.GAMES))")}"   # the games named, else every registered game
python -c "import sys, whist_env; bad = [g for g in sys.argv[1:] if g not in whist_env.GAMES]; bad and print(f'unknown game(s) {bad}; games: {sorted(whist_env.GAMES)}', file=sys.stderr); sys.exit(2 if bad else 0)" $games
if [ ! -e "$db" ] && [ -e "$copy" ]; then mkdir -p runs && snapshot "$copy" "$db"; fi
if [ -e "$db" ] && [ -e "$copy" ]; then copy_is_covered; fi
for game in $games; do
  for spec in heuristic "zoo:$game" pimc; do
    if complete "$spec" "$game"; then echo "complete already: $spec $game"; continue; fi
    played=$(mktemp -u)   # made when the report stops, which ends the refresher
    refresh_copy "$played" & refresher=$!
    status=0
    whist benchmark "$spec" --game "$game" --out "reports/benchmark/$game" --db "$db" \
      --workers "$workers" > /dev/null || status=$?   # progress lines (deals/s, ETA) go to stderr
    touch "$played"; wait "$refresher" || true; rm -f "$played"
    snapshot "$db" "$copy"   # the deals so far, also of a report stopped by Ctrl-C (exit 130) or an error
    if [ "$status" -ne 0 ]; then exit "$status"; fi
    echo "$(date -u +%FT%TZ) done: $spec $game"
  done
done
whist benchmark-page reports/benchmark --out docs/benchmarks.md
python docs/generate.py   # the game pages show the same tables
