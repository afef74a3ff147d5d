"""The benchmark protocol (``whist benchmark``): one agent against a fixed ladder of baselines, on
fixed duplicate deals, reported as JSON and Markdown that can be cited and compared.

Protocol version 1 (:data:`PROTOCOL`):

* **Deals**: :data:`Protocol.deals` (500) duplicate deals against every rung (every deal played
  once per side, :func:`training.evaluation.match.evaluate_pair`), drawn from the match seed
  :data:`Protocol.seed` (9,000) of the ``REPORT`` seed range, which no training, teacher data or
  tuning of this project draws from (:mod:`training.evaluation.seed_ranges`). Every agent meets
  the same deals.
* **The ladder**: ``random``, ``heuristic`` (the game's rule-based player), ``pimc`` at its
  default options, and ``zoo:<game>`` (the model zoo's agent), each recorded by its canonical spec
  (:func:`agents.registry.canonical_spec`) and the SHA-256 of the files it loads. A rung that is
  the benchmarked agent itself is not played.
* **Rules**: the game's default options, one hand per play (``episode="hand"``), changed by its
  descriptor's ``evaluation_options`` (:mod:`whist_env.games`): Classic Whist without honours
  (``honours=false``: honours are dealt luck, not play). Options given with ``--option`` are
  named in the report.
* **Statistics** (95% level, the agent's point of view): win rate per hand and points per hand
  with t-intervals over deals, as ``whist eval``.

Each deal is stored as soon as it is played (:mod:`training.evaluation.store`), so an
interrupted benchmark resumes where it stopped and a repeated one plays nothing; ``--workers``
and ``--ray`` give the same report as a serial run (every play is seeded from the match seed, the
deal and the side). The report says which suite version, env id and version, commit, options and
protocol version produced it; each played rung names the code version that began storing its deals
(``first_played_with``: stored deals are reused only for the same env version, rules and agents,
:mod:`training.evaluation.store`). ``--smoke`` plays :data:`Protocol.smoke_deals` deals a rung and marks
the report as outside the protocol (``within_protocol: false``).

``whist benchmark-page`` turns the committed reports (``reports/benchmark/<game>/*.json``) into
the docs' results page (:func:`results_page`); :func:`results_markdown` gives one game's table
for its docs page.

Examples: ``whist benchmark heuristic --game classic_whist --workers 2``;
``whist benchmark python:my_agents:policy --game german_whist``;
``whist benchmark-page reports/benchmark --out docs/benchmarks.md``.
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from training.errors import CommandError, Interrupted
from training.evaluation.curves import CURVES_DIR, PLOTS_DIR, curve_table, game_curves
from training.evaluation.match import (
    PairResult,
    deal_values,
    prepare_match,
    safe_file_name,
    summarize_pair,
    write_text_atomically,
)
from training.evaluation.seed_ranges import REPORT, check_range
from training.evaluation.store import (
    ResultsStore,
    StoreError,
    agent_identity,
    canonical_json,
    duplicate_seats,
)
from whist_env import games
from whist_env.provenance import short_commit
from whist_env.versions import env_id, env_version


@dataclass(frozen=True)
class Protocol:
    """A version of the benchmark protocol.

    Attributes:
        version: protocol version (int); any change to the fields below makes a new one.
        seed: match seed of the deals, in ``REPORT`` (:mod:`training.evaluation.seed_ranges`).
        deals: duplicate deals per rung.
        rungs: names of the ladder's rungs, weakest first (``"zoo"`` is ``zoo:<game>``).
        rules: game name -> the rule options that differ from the game's defaults (over
            ``episode="hand"``), for the games that have any; :data:`PROTOCOL`'s is read from the
            descriptors' ``evaluation_options`` (a live, read-only mapping).
        smoke_deals: deals per rung of a ``--smoke`` run (outside the protocol).
    """

    version: int
    seed: int
    deals: int
    rungs: tuple[str, ...]
    rules: Mapping[str, Mapping[str, Any]]
    smoke_deals: int

    def rung_spec(self, rung: str, game: str) -> str:
        """The agent spec of a rung in ``game`` (``zoo`` names the game's zoo agent)."""
        return f"zoo:{game}" if rung == "zoo" else rung

    def options(self, game: str) -> dict[str, Any]:
        """The protocol's rule options of ``game``: ``episode="hand"`` and :attr:`rules` of the game."""
        return {"episode": "hand", **dict(self.rules.get(game, {}))}

    def rules_text(self, markdown: bool = True) -> str:
        """``"Classic Whist with `honours=false`"``: each game of :attr:`rules` (its docs title) with
        its changed options (in backticks when ``markdown``), joined by ``"; "``; ``""`` when no
        game has any."""
        quote = "`" if markdown else ""
        return "; ".join(f"{games.spec(game).docs.title} with {quote}{_options_text(options)}{quote}"
                         for game, options in self.rules.items())


#: The benchmark protocol this code runs.
PROTOCOL = Protocol(
    version=1,
    seed=9_000,
    deals=500,
    rungs=("random", "heuristic", "pimc", "zoo"),
    rules=games.view(lambda spec: spec.evaluation_options, where=lambda spec: bool(spec.evaluation_options)),
    smoke_deals=3,
)
check_range(PROTOCOL.seed, REPORT, "the benchmark protocol's match seed")

#: Folder of the committed reports of the baselines and the zoo, ``<game>/<agent>.json``.
REPORTS_DIR = Path("reports") / "benchmark"
#: Default results store of ``whist benchmark`` (each deal stored as played).
DEFAULT_DB = Path("runs") / "benchmark.sqlite"


def report_name(label: str, smoke: bool = False, options_differ: bool = False, options: Mapping[str, Any] | None = None) -> str:
    """The file stem of a report: the agent's canonical spec made safe for a file name, with
    ``__options-<hash>`` (of ``options``: the changes from the protocol's rules,
    :func:`options_changed`) when the rules differ from the protocol's and ``__smoke`` for a smoke run."""
    import hashlib

    stem = safe_file_name(label)
    if options_differ:
        stem += "__options-" + hashlib.sha256(canonical_json(dict(options or {})).encode()).hexdigest()[:8]
    return stem + ("__smoke" if smoke else "")


def _stored_result(store: ResultsStore, match: int, deals: int, n_sides: int, **fields: Any) -> PairResult:
    """The :class:`PairResult` of the stored deals ``0 .. deals-1`` of ``match``."""
    diffs, wins, hands, games = [], [], 0, 0
    for outcome in store.deals(match):
        if outcome.index >= deals:
            continue
        diff, win, hands_sum = deal_values(outcome.plays, n_sides)
        diffs.append(diff)
        wins.append(win)
        hands += hands_sum
        games += len(outcome.plays)
    return summarize_pair(diffs, wins, hands=hands, games=games, deals_requested=deals, complete=len(diffs) == deals, **fields)


def _number(v: float | None) -> float | None:
    return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else round(float(v), 6)


def _rung_entry(rung: str, spec: str, identity: tuple[str, str | None], result: PairResult | None, note: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"rung": rung, "spec": spec, "kind": identity[0], "sha256": identity[1]}
    if result is None:
        entry.update(played=False, note=note)
        return entry
    entry.update(
        played=True,
        deals=result.deals,
        deals_required=result.deals_requested,
        complete=result.complete,
        hands=result.hands,
        win_rate=_number(result.win_rate),
        win_rate_ci=[_number(v) for v in result.win_rate_ci],
        points_per_hand=_number(result.points_per_hand),
        points_per_hand_ci=[_number(v) for v in result.points_per_hand_ci],
        p_value=_number(result.p_value),
        interval_note=result.interval_note,
    )
    return entry


def build_report(game: str, agent: tuple[str, str, tuple[str, str | None]], options: Mapping[str, Any],
                 changed: Mapping[str, Any], smoke: bool, rungs: Sequence[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """The report as a JSON-ready dict (the fields :func:`format_report` and :func:`results_markdown` read).

    Args:
        game: the game name.
        agent: ``(spec as typed, canonical spec, (kind, sha256 or None))``.
        options: the rule options played.
        changed: those that differ from the protocol's rules (:func:`options_changed`).
        smoke: whether this is a ``--smoke`` run (outside the protocol).
        rungs: one entry per rung reached so far (played, or not with a note); the report is
            complete when every rung of the protocol is there and every one played is complete.
        seconds: wall time of the runs that played its deals (a resumed report adds each run's).
    """
    import whist_env

    complete = len(rungs) == len(PROTOCOL.rungs) and all(r.get("complete", True) for r in rungs if r["played"])
    return {
        "report": "whist-env benchmark",
        "protocol": {"version": PROTOCOL.version, "seed": PROTOCOL.seed, "seed_range": str(REPORT),
                     "deals_per_rung": PROTOCOL.smoke_deals if smoke else PROTOCOL.deals, "duplicate": True,
                     "rungs": list(PROTOCOL.rungs)},
        "within_protocol": not smoke,
        "complete": complete,
        "game": game,
        "env_id": env_id(game),
        "env_version": env_version(game),
        "suite_version": str(whist_env.__version__),
        "commit": short_commit(),
        "options": dict(sorted(options.items())),
        "options_changed": dict(sorted(changed.items())),
        "agent": {"spec": agent[0], "canonical": agent[1], "kind": agent[2][0], "sha256": agent[2][1]},
        "rungs": list(rungs),
        "created_utc": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        "seconds": round(seconds, 1),
    }


def _resolved_options(game: str, options: Mapping[str, Any]) -> dict[str, Any]:
    import dataclasses

    from whist_env import GAMES

    return dataclasses.asdict(GAMES[game].raw_env(**options).game.options)


def options_changed(game: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The rule options of ``options`` whose resolved values differ from the protocol's rules of
    ``game`` (an option given at its protocol value is no change), sorted by name."""
    played, protocol = _resolved_options(game, options), _resolved_options(game, PROTOCOL.options(game))
    return {k: played[k] for k in sorted(played) if played[k] != protocol.get(k)}


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}%"


def _signed(v: float | None) -> str:
    return "–" if v is None else f"{v:+.2f}"


def _interval(ci: Sequence[float | None], fmt) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return ""
    return f" [{fmt(ci[0])}, {fmt(ci[1])}]"


def _rung_cells(entry: Mapping[str, Any]) -> tuple[str, str]:
    if not entry["played"]:
        return entry.get("note", "not played"), ""
    win = _pct(entry["win_rate"]) + _interval(entry["win_rate_ci"], _pct)
    points = _signed(entry["points_per_hand"]) + _interval(entry["points_per_hand_ci"], _signed)
    if entry.get("interval_note") and not _interval(entry["points_per_hand_ci"], _signed):
        points += f" (no interval: {entry['interval_note']})"
    if not entry.get("complete", True):
        win += f" (INCOMPLETE: {entry['deals']} of {entry['deals_required']} deals)"
    return win, points


def _options_text(options: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in options.items()) or "the defaults"


def format_report(report: Mapping[str, Any]) -> str:
    """The report as Markdown: what was run (protocol, versions, rules) and one row per rung."""
    p = report["protocol"]
    agent = report["agent"]
    status = "" if report["within_protocol"] else " **Smoke run: outside the protocol** (too few deals to compare)."
    if not report["complete"]:
        status += " **Incomplete**: run the same command again to finish it."
    lines = [
        f"# Benchmark: `{agent['canonical']}` in {report['game']}",
        "",
        f"Protocol v{p['version']}: {p['deals_per_rung']} duplicate deals per rung from match seed {p['seed']:,} "
        f"({p['seed_range']}); rules: {_options_text(report['options'])}"
        + (f" (changed from the protocol: {_options_text(report['options_changed'])})" if report["options_changed"] else "")
        + f". whist-env {report['suite_version']}, `{report['env_id']}`, commit {report['commit'] or 'unknown'}, "
        f"{report['created_utc']}.{status}",
        "",
        f"Agent: `{agent['spec']}` (kind {agent['kind']}" + (f", sha256 `{agent['sha256'][:16]}…`" if agent["sha256"] else "") + ").",
        "",
        "| rung | opponent | deals | hands | win rate per hand [95% CI] | points per hand vs the rung [95% CI] |",
        "|---|---|---:|---:|---|---|",
    ]
    for entry in report["rungs"]:
        win, points = _rung_cells(entry)
        who = f"`{entry['spec']}`" + (f" (sha256 `{entry['sha256'][:16]}…`)" if entry["sha256"] else "")
        lines.append(f"| {entry['rung']} | {who} | {entry.get('deals', '')} | {entry.get('hands', '')} | {win} | {points} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------- the command
def run_benchmark(args: Any) -> int:
    """Carry out ``whist benchmark`` (arguments: :func:`training.cli.configure_benchmark`): play
    every rung, store each deal, write ``<out>/<agent>.json`` and ``.md`` after every rung and
    print the Markdown; returns 0.

    Raises:
        CommandError: a bad game, option or agent spec, an agent that cannot play the game, or a
            store or output folder that cannot be used.
        Interrupted: Ctrl-C; every finished deal stays stored and the report written so far says
            it is incomplete; the same command resumes.
    """
    from agents.registry import canonical_spec, spec_error
    from whist_env import GAMES

    game = args.game
    if game not in GAMES:
        raise CommandError(f"unknown game {game!r}; games: {sorted(GAMES)}")
    deals = PROTOCOL.smoke_deals if args.smoke else PROTOCOL.deals
    options = {**PROTOCOL.options(game), **dict(args.option)}
    if str(dict(args.option).get("episode", "hand")) == "game":
        raise CommandError(f"--option episode={options['episode']}: the protocol plays one hand a deal and reports per "
                           "hand (episode=hand); compare whole games with `whist eval --option episode=game`")
    try:
        agent_canonical = canonical_spec(args.spec, game)
    except (ValueError, ImportError) as err:
        raise CommandError(spec_error(args.spec, err)) from None
    rung_specs = [PROTOCOL.rung_spec(r, game) for r in PROTOCOL.rungs]
    setup = prepare_match(game, [args.spec, *rung_specs], deals, PROTOCOL.seed, list(options.items()), "benchmark",
                          args.workers, args.ray)
    try:
        identities = [agent_identity(spec, game) for spec in setup.specs]
    except (ValueError, OSError) as err:
        raise CommandError(f"cannot hash the files an agent loads: {err}") from None
    out = Path(args.out) if args.out else Path("runs") / "benchmark" / game
    if out.exists() and not out.is_dir():
        raise CommandError(f"--out {out}: not a folder")
    changed = options_changed(game, setup.options)
    stem = report_name(agent_canonical, args.smoke, bool(changed), changed)  # one name for one set of rules
    paths = (out / f"{stem}.json", out / f"{stem}.md")
    before = [path.read_text() if path.is_file() else None for path in paths]  # what an agent's failure restores
    try:  # the store before the report folder: a store that cannot be used leaves no folder behind
        store = ResultsStore(args.db)
    except (StoreError, OSError, sqlite3.Error) as err:
        raise CommandError(f"cannot open the results store {args.db}: {err}") from None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        store.close()
        raise CommandError(f"--out {out}: cannot create the folder: {err}") from None
    n_sides = setup.game.num_sides
    agent = setup.agents[0]
    agent_id_key = (setup.specs[0], identities[0])
    rungs: list[dict[str, Any]] = []
    start = time.perf_counter()
    earlier = _seconds_before(before[0], game, agent_canonical, identities[0][1])
    playing = False  # a run that finds every deal stored adds no time

    def write(entries: list[dict[str, Any]]) -> None:
        seconds = earlier + (time.perf_counter() - start if playing else 0.0)
        report = build_report(game, (args.spec, agent_canonical, identities[0]), setup.options, changed, args.smoke, entries,
                              seconds)
        write_text_atomically(paths[0], json.dumps(report, indent=2) + "\n")
        write_text_atomically(paths[1], format_report(report))

    def partial(rung: str, spec: str, identity: tuple[str, str | None], match: int) -> dict[str, Any]:
        entry = _rung_entry(rung, spec, identity, _stored_result(store, match, deals, n_sides, agent_a=setup.specs[0],
                                                                 agent_b=spec, game=game, seed=PROTOCOL.seed,
                                                                 options=setup.options))
        # the code that began storing this rung's deals (a resumed rung may span several commits)
        entry["first_played_with"] = next(m.code_version for m in store.matches(game) if m.id == match)
        return entry

    with store:
        a = store.agent_id(setup.specs[0], *identities[0])
        current: tuple[str, str, tuple[str, str | None], int] | None = None
        try:
            for k, rung in enumerate(PROTOCOL.rungs, start=1):
                spec, identity = setup.specs[k], identities[k]
                if (spec, identity) == agent_id_key:
                    rungs.append(_rung_entry(rung, spec, identity, None, "the agent itself: not played"))
                    write(rungs)
                    continue
                b = store.agent_id(spec, *identity)
                match = store.match_id(game, setup.options, PROTOCOL.seed, a, b, True, duplicate_seats(setup.game, a, b))
                done = {i for i in store.stored_deals(match) if i < deals}
                current = (rung, spec, identity, match)
                if len(done) < deals:
                    playing = True
                    write(rungs + [partial(*current)])
                    try:
                        evaluate_pair_stored(store, match, game, agent, setup.agents[k], deals, setup.options, done,
                                             (setup.specs[0], spec), args)
                    except ValueError as err:  # an agent that cannot go to the workers, an illegal action, raised
                        # running again would fail again: the report stays as it was, the deals played are stored
                        _restore(paths, before)
                        raise CommandError(f"{setup.specs[0]} vs {spec}: {err}; the report is left as it was") from None
                rungs.append(partial(*current))
                current = None
                write(rungs)
        except KeyboardInterrupt:
            if current is not None:
                write(rungs + [partial(*current)])
            raise Interrupted(f"the deals played are stored in {args.db}; {paths[0]} says how far each rung got; "
                              "run the same command again to resume") from None
    text = format_report(json.loads(paths[0].read_text()))
    print(text)
    print(f"wrote {paths[0]} and {paths[1]} in {time.perf_counter() - start:.1f} s; deals stored in {args.db}", file=sys.stderr)
    return 0


def _seconds_before(text: str | None, game: str, canonical: str, sha256: str | None) -> float:
    """The wall time recorded by an earlier run of the same report (``text``, its JSON), which a
    resumed run adds to; 0 when there is none, or it is of another protocol, env version or agent
    (``canonical`` spec and file ``sha256``: a changed agent plays every deal again)."""
    try:
        report = json.loads(text) if text else {}
        same = (report["protocol"]["version"] == PROTOCOL.version and report["env_id"] == env_id(game)
                and report["agent"]["canonical"] == canonical and report["agent"]["sha256"] == sha256)
        return float(report["seconds"]) if same else 0.0
    except (ValueError, KeyError, TypeError):
        return 0.0


def _restore(paths: Sequence[Path], texts: Sequence[str | None]) -> None:
    """Put each file back as it was: its text, or no file where there was none."""
    for path, text in zip(paths, texts):
        if text is None:
            path.unlink(missing_ok=True)
        else:
            write_text_atomically(path, text)


def evaluate_pair_stored(store: ResultsStore, match: int, game: str, agent_a: Any, agent_b: Any, deals: int,
                         options: Mapping[str, Any], done: set[int], labels: tuple[str, str], args: Any) -> None:
    """Play the deals of ``match`` not in ``done`` and store each as it finishes."""
    from training.evaluation.match import evaluate_pair

    evaluate_pair(game, agent_a, agent_b, deals, seed=PROTOCOL.seed, options=options, duplicate=True, progress=not args.quiet,
                  labels=labels, on_deal=lambda outcome: store.add_deal(match, outcome), skip_deals=done,
                  workers=args.workers, ray_address=args.ray)


# ---------------------------------------------------------------------------------- reports -> docs
class ReportError(ValueError):
    """A file that is not a benchmark report this code reads (the message names it and why)."""


def load_report(path: str | Path) -> dict[str, Any]:
    """A report written by ``whist benchmark``.

    Raises:
        ReportError: unreadable, not JSON, or missing the fields of a report.
    """
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ReportError(f"{path}: not a readable benchmark report: {err}") from None
    needed = ("protocol", "within_protocol", "complete", "game", "agent", "rungs", "env_id", "options")
    if not isinstance(report, dict) or report.get("report") != "whist-env benchmark" or any(k not in report for k in needed):
        raise ReportError(f"{path}: not a whist-env benchmark report (missing {[k for k in needed if k not in report]})")
    return report


def protocol_reports(reports_dir: str | Path, game: str | None = None) -> list[dict[str, Any]]:
    """The complete reports of the current protocol version and env version in
    ``reports_dir/<game>/*.json``, sorted by game and agent (the others are left out:
    :func:`results_markdown` names each with the reason).

    Raises:
        ReportError: a file there that is not a report.
    """
    return _reports(reports_dir, game)[0]


def _reports(reports_dir: str | Path, game: str | None) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], str]]]:
    found, left_out = [], []
    for path in sorted(Path(reports_dir).glob(f"{game or '*'}/*.json")):
        report = load_report(path)
        why = _why_left_out(report)
        if why:
            left_out.append((report, why))
        else:
            found.append(report)
    return sorted(found, key=_report_order), sorted(left_out, key=lambda pair: _report_order(pair[0]))


def _report_order(report: Mapping[str, Any]) -> tuple[str, tuple[int, str]]:
    return report["game"], _agent_order(report["agent"]["canonical"], report["game"])


def _why_left_out(report: Mapping[str, Any]) -> str:
    """Why ``report`` is not a result of the current protocol and env version (``""``: it is)."""
    if not report["within_protocol"]:
        return "a --smoke run, outside the protocol"
    if report["protocol"]["version"] != PROTOCOL.version:
        return f"protocol v{report['protocol']['version']}, not v{PROTOCOL.version}"
    try:
        now = env_id(report["game"])
    except ValueError:
        return f"an unknown game {report['game']!r}"
    if report["env_id"] != now:
        return f"played on `{report['env_id']}`; the env is now `{now}`"
    if not report["complete"]:
        played = sum(int(e.get("deals", 0)) for e in report["rungs"] if e.get("played"))
        return f"incomplete ({played:,} deals played so far)"
    return ""


def _agent_order(canonical: str, game: str) -> tuple[int, str]:
    ladder = [PROTOCOL.rung_spec(r, game) for r in PROTOCOL.rungs]
    kind = canonical.partition(":")[0]
    for i, spec in enumerate(ladder):
        if canonical == spec or (spec == "pimc" and kind == "pimc"):
            return i, canonical
    return len(ladder), canonical


def results_markdown(game: str, reports_dir: str | Path = REPORTS_DIR) -> str:
    """One game's benchmark table in Markdown: a row per committed report (the agent), a column
    per rung (win rate per hand with its 95% CI, then points per hand), under protocol
    :data:`PROTOCOL`; a sentence saying so when no report of the game is committed.

    Raises:
        ReportError: a file in the game's report folder that is not a report.
    """
    reports, left_out = _reports(reports_dir, game)
    aside = "".join(f"\nNot in the table: `{r['agent']['canonical']}`, {why}." for r, why in left_out)
    if not reports:
        return (f"No complete benchmark report of {game} under protocol v{PROTOCOL.version} and `{env_id(game)}` is "
                f"committed yet (`whist benchmark SPEC --game {game}` writes one).\n{aside}" + ("\n" if aside else ""))
    rungs = list(PROTOCOL.rungs)
    head = "| agent | " + " | ".join(f"vs {r}" for r in rungs) + " |"
    lines = [head, "|---|" + "---|" * len(rungs)]
    for report in reports:
        by_rung = {e["rung"]: e for e in report["rungs"]}
        cells = []
        for r in rungs:
            entry = by_rung.get(r)
            if entry is None:
                cells.append("")
                continue
            win, points = _rung_cells(entry)
            cells.append(win if not entry["played"] else f"{win}<br>{points} pts")
        agent = report["agent"]
        name = f"`{agent['canonical']}`" + (f" (`{agent['sha256'][:8]}`)" if agent["sha256"] else "")
        changed = f" with {_options_text(report['options_changed'])}" if report["options_changed"] else ""
        lines.append(f"| {name}{changed} | " + " | ".join(cells) + " |")
    first = reports[0]
    lines += ["", f"Win rate per hand of the row's agent against the rung [95% CI], and its points per hand minus the rung's; "
                  f"{first['protocol']['deals_per_rung']} duplicate deals per rung from match seed {first['protocol']['seed']:,}, "
                  f"rules {_options_text(PROTOCOL.options(game))}; `{first['env_id']}`, whist-env "
                  f"{', '.join(sorted({r['suite_version'] for r in reports}))} "
                  f"(commits {', '.join(sorted({str(r['commit']) for r in reports}))})."]
    return "\n".join(lines) + "\n" + aside + ("\n" if aside else "")


def results_page(reports_dir: str | Path = REPORTS_DIR, curves_dir: str | Path = CURVES_DIR) -> str:
    """The docs' benchmark-results page: the protocol, then per game :func:`results_markdown` and,
    where ``curves_dir`` holds the game's learning curves (:mod:`training.evaluation.curves`), its
    figure and each run's last point."""
    from whist_env import GAMES

    p = PROTOCOL
    lines = [
        "<!-- generated by `whist benchmark-page` from the benchmark reports (`whist benchmark`); do not edit by hand -->",
        "",
        "# Benchmark results",
        "",
        f"Every figure on this page comes from `whist benchmark` under protocol v{p.version}: {p.deals} duplicate deals "
        f"against each rung of the ladder ({', '.join(p.rungs)}), from match seed {p.seed:,} of the {REPORT} seed range, "
        "which no training, teacher data or tuning in this project uses; each game's default rules, one hand per play"
        f"{', ' + p.rules_text() if p.rules else ''}. Win rates count hands (ties half), with 95% t-intervals over deals. "
        "Each report plays its own matches: A's row against B and B's row against A are two matches on the same deals, "
        "so they mirror exactly only where both agents are deterministic; `pimc` samples its worlds, so its two "
        "directions differ by its sampling. "
        "To benchmark your own agent: `whist benchmark SPEC --game GAME` (SPEC: `checkpoint:PATH`, `sb3:PATH`, "
        "`rllib:PATH` or `python:MODULE:ATTR`).",
        "",
    ]
    for game in GAMES:
        lines += [f"## {game}", "", results_markdown(game, reports_dir)]
        curves = game_curves(game, curves_dir)
        if curves:
            lines += ["", "PPO from scratch (the learning curve; in-training evaluations on the development seed range):", "",
                      f"![Learning curve of PPO from scratch]({PLOTS_DIR.relative_to('docs').as_posix()}/{game}.png)", "",
                      curve_table(curves)]
    return "\n".join(lines).rstrip() + "\n"


def run_benchmark_page(args: Any) -> int:
    """Carry out ``whist benchmark-page``: write (or with ``--check`` compare) the results page;
    returns 0, or 1 when ``--check`` finds the page out of date.

    Raises:
        CommandError: a report that cannot be read, or a page that cannot be written.
    """
    if not Path(args.reports).is_dir():
        raise CommandError(f"no folder of reports at {args.reports}")
    from whist_env import GAMES

    if not any(any((Path(args.reports) / game).glob("*.json")) for game in GAMES):
        raise CommandError(f"no benchmark reports (GAME/*.json) in {args.reports}: give the folder that holds a folder "
                           f"per game, as {REPORTS_DIR} does")
    try:
        text = results_page(args.reports)
    except ReportError as err:
        raise CommandError(str(err)) from None
    out = Path(args.out)
    if args.check:
        current = out.read_text() if out.exists() else None
        if current != text:
            print(f"{out} is out of date with the reports in {args.reports}: run `whist benchmark-page {args.reports} "
                  f"--out {out}`", file=sys.stderr)
            return 1
        print(f"{out} is up to date")
        return 0
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(out, text)
    except OSError as err:
        raise CommandError(f"--out {out}: {err}") from None
    print(f"wrote {out}")
    return 0
