"""``whist league``: a stored round robin of duplicate-deal matches, then a leaderboard (issue 6, item 3).

Every pair of the listed agents plays ``--deals`` duplicate deals with
:func:`training.evaluate.evaluate_pair` (the same deals for every pair, from ``--seed``). Each
deal is written to the results store (:mod:`training.store`) as soon as it is finished; deals
already stored for the same game, options, seed and agents are skipped, so an interrupted league
resumes where it stopped and a repeated one adds nothing. At the end the leaderboard of the game
and options (every match stored for them, :mod:`training.ratings`) is printed.

Example: ``whist league --game classic_whist --agents random heuristic random --deals 300``.
"""

from __future__ import annotations

import argparse
import sys
import time

from training.store import DEFAULT_PATH


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the ``whist league`` arguments to ``parser``."""
    from training.cli import add_game_arguments, add_match_arguments

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (
        "Each deal is stored as soon as it is played; running the same league again skips the deals\n"
        "already stored (and so resumes an interrupted one). A spec listed twice gets a suffix (random#2).\n\n"
        "example: whist league --game classic_whist --agents random heuristic random --deals 300"
    )
    add_game_arguments(parser, "; one play is one hand unless --option episode=game")
    add_match_arguments(parser, deals=300)
    parser.add_argument("--db", default=str(DEFAULT_PATH), metavar="PATH", help="results store (default: %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _error(message: str) -> int:
    print(f"whist league: error: {message}", file=sys.stderr)
    return 2


def unique_labels(specs: list[str]) -> list[str]:
    """The specs as agent names, a repeated spec getting ``#2``, ``#3``, ... (as ``whist eval`` does)."""
    labels: list[str] = []
    for spec in specs:
        label, k = spec, 2
        while label in labels:
            label, k = f"{spec}#{k}", k + 1
        labels.append(label)
    return labels


def run(args: argparse.Namespace) -> int:
    """Run the league, store every deal, print the leaderboard; returns the exit status
    (0 on success, 2 on a bad game, option, deal count, agent spec or store file)."""
    import sqlite3

    from agents import make_agent
    from training.evaluate import evaluate_pair
    from training.ratings import compute_leaderboard, format_leaderboard
    from training.store import ResultsStore, StoreError, agent_identity
    from whist_env import GAMES

    if args.game not in GAMES:
        return _error(f"unknown game {args.game!r}; games: {sorted(GAMES)}")
    if len(args.agents) < 2:
        return _error("--agents needs at least two agent specs")
    if args.deals < 1:
        return _error(f"--deals must be >= 1, got {args.deals}")
    if args.seed < 0:
        return _error(f"--seed must be >= 0, got {args.seed}")
    options = {"episode": "hand", **dict(args.option)}
    try:
        raw = GAMES[args.game].raw_env(**options)
    except (ValueError, TypeError) as err:
        return _error(f"bad --option: {err}")
    g = raw.game
    agents, identities = [], []
    for i, spec in enumerate(args.agents):
        try:
            agents.append(make_agent(spec, args.game, seed=args.seed + 1 + i))
            identities.append(agent_identity(spec))
        except (ValueError, OSError, ImportError, RuntimeError, KeyError) as err:
            return _error(f"bad agent spec {spec!r}: {err}")
    labels = unique_labels(list(args.agents))
    try:
        store = ResultsStore(args.db)
    except (StoreError, sqlite3.DatabaseError) as err:
        return _error(f"cannot open the results store: {err}")
    with store:
        ids = [store.agent_id(label, kind, sha) for label, (kind, sha) in zip(labels, identities)]
        start = time.perf_counter()
        played = skipped = 0
        for i in range(len(agents)):
            for j in range(i + 1, len(agents)):
                seats = [[ids[i] if g.side_of(seat) == side else ids[j] for seat in range(g.num_players)] for side in range(g.num_sides)]
                match = store.match_id(args.game, options, args.seed, ids[i], ids[j], True, seats)
                done = {k for k in store.stored_deals(match) if k < args.deals}
                skipped += len(done)
                if len(done) == args.deals:
                    continue

                def store_deal(outcome, match=match):
                    store.add_deal(match, outcome)

                result = evaluate_pair(args.game, agents[i], agents[j], args.deals, seed=args.seed, options=options,
                                       duplicate=True, progress=not args.quiet, labels=(labels[i], labels[j]),
                                       on_deal=store_deal, skip_deals=done)
                played += result.deals
        print(f"played {played} deals, skipped {skipped} already stored, in {time.perf_counter() - start:.1f} s; store: {args.db}")
        board = compute_leaderboard(store, args.game, options)
        print(format_leaderboard(board))
    return 0
