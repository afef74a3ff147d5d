"""Ablation of pimc's bids of a trick count (Romanian Whist, Partnership Spades): pimc bids, the
heuristic plays every card, against the heuristic on duplicate deals, so that a difference is
the bids' alone.

Bidding rules compared, each from the same worlds (``pimc``'s, default options):

* ``rollout``: pimc's own: every legal bid played out by the rollout policy, ``worlds`` worlds
  each, the policy's bid unless another gains more than ``z`` standard errors
  (:mod:`agents.search.pimc`);
* ``count``: pimc's former rule: the bidder's tricks counted in rollouts of the policy's own bid,
  and the count seen most often bid (ties to the best mean ``contract_value``, then the lowest);
  pimc counted a Romanian bidder's tricks double dummy where the solver was fast enough, here
  rollouts count them in both games;
* ``value``: the same counts, but the bid with the best mean ``contract_value`` over them (the
  payoff's asymmetry, not what another bid changes in the play).

Deals come from the development range (default match seed 14,600): this is tuning, not a
published strength claim. Prints the table of each rule against the heuristic.

    python benchmarks/search_bids.py --game spades --deals 300 --rules rollout count value
    python benchmarks/search_bids.py --game spades --deals 300 --rules rollout --worlds 8
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from agents.registry import make_agent
from training.evaluation.match import evaluate_pair, format_table
from training.evaluation.seed_ranges import DEVELOPMENT, check_range
from whist_env import games

RULES = ("rollout", "count", "value")


class BidsOnly:
    """Bids as ``pimc`` with the bidding ``rule``; every other decision the heuristic's."""

    def __init__(self, game: str, rule: str, seed: int, worlds: int = 32) -> None:
        self.game, self.rule, self.name = game, rule, f"pimc:worlds={worlds} bids ({rule})"
        self.pimc = make_agent(f"pimc:worlds={worlds}", game, seed=seed)
        self.heuristic = make_agent("heuristic", game)

    def reseed(self, seed: int) -> None:
        self.pimc.reseed(seed)

    def act_in_env(self, env: Any, agent: str) -> int:
        info = env.information_state(agent)
        if games.spec(self.game).decision(info["phase"]).kind != games.BID:
            return int(self.heuristic.act(env.observe(agent), info))
        if self.rule == "rollout":
            return self.pimc.act_in_env(env, agent)
        return self._counted_bid(env, agent)

    def _counted_bid(self, env: Any, agent: str) -> int:
        """``count`` or ``value``: the bidder's tricks in rollouts of the policy's own bid."""
        game, seat = env.game, env.possible_agents.index(agent)
        legal = [int(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])]
        if len(legal) == 1:
            return legal[0]
        tricks = [game.bid_meaning(a).tricks for a in legal]
        counts, scores = np.zeros(len(legal)), np.zeros(len(legal))
        for world in self.pimc._draw_worlds(env, agent, self.pimc.worlds):
            took = self.pimc.rollout.final(world).last_hand[1][seat]
            counts += [t == took for t in tricks]
            scores += [game.contract_value(seat, a, took) for a in legal]
        key = (lambda i: (counts[i], scores[i], -i)) if self.rule == "count" else (lambda i: (scores[i], counts[i], -i))
        return legal[max(range(len(legal)), key=key)]


def bidding_games() -> list[str]:
    """The games whose bids of a trick count pimc values by rollouts (Romanian Whist, Spades)."""
    return [spec.name for spec in games.specs()
            if any(d.kind == games.BID and d.search == "rollout" for d in spec.decisions.values())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="spades", choices=bidding_games())
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--seed", type=int, default=14_600, help="match seed, in the development range")
    parser.add_argument("--rules", nargs="+", choices=RULES, default=list(RULES))
    parser.add_argument("--worlds", type=int, default=32, help="pimc's worlds: for rollout, the worlds of every bid")
    args = parser.parse_args(argv)
    check_range(args.seed, DEVELOPMENT, "--seed")
    results = []
    for rule in args.rules:
        start = time.perf_counter()
        results.append(evaluate_pair(args.game, BidsOnly(args.game, rule, seed=1, worlds=args.worlds), make_agent("heuristic", args.game),
                                     args.deals, seed=args.seed, progress=True))
        print(f"{rule}: {time.perf_counter() - start:.0f} s", flush=True)
    print(format_table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
