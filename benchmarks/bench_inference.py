"""How much policy-based inference tells search about the hidden cards: effective sample size and
the share of hidden cards its worlds place where they really are.

At every card-play decision of seat ``player_0`` (the table played by ``--table`` in every seat,
one hand per deal), ``--candidates`` worlds are drawn by ``env.resample_from_infostate`` and
weighed by each inference policy (:class:`agents.search.inference.WorldWeights`, as
``pimc:inference=SPEC`` weighs them; Rebstock et al., CoG 2019). Per policy and trick of the hand
it prints

* **ESS**: Kish's effective sample size of the weights, out of the candidates;
* **placed**: the weighted share of the other players' cards that a world deals to the player
  who really holds them, against **uniform**, the same share with equal weights (what
  ``inference=none`` sees).

A policy that is the table's own (the heuristic at a heuristic table) should place more cards
right than uniform worlds; its ESS says how many of the candidates carry that. Learned agents
(``zoo:GAME``) are weighed by their softmax policy, the rule-based players by their choice
softened by ``--epsilon``.

    python benchmarks/bench_inference.py --game classic_whist --inference heuristic zoo --hands 20
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import whist_env
from agents.registry import make_agent
from agents.search.inference import WorldWeights, effective_sample_size
from whist_env.envs.policy_action import policy_action


def placed_share(world: object, truth: object, observer: int) -> float:
    """Share of the cards held by the players other than ``observer`` in ``truth`` (a raw env)
    that ``world`` (a raw env drawn from the observer's information) deals to the same player."""
    true_hands, world_hands = truth.game.hands, world.game.hands
    held = sum(true_hands[s].bit_count() for s in range(len(true_hands)) if s != observer)
    right = sum((true_hands[s] & world_hands[s]).bit_count() for s in range(len(true_hands)) if s != observer)
    return right / held if held else 1.0


def measure(game: str, specs: list[str], table: str, hands: int, candidates: int, epsilon: float,
            seed: int) -> dict[str, dict[int, list[tuple[float, float, float]]]]:
    """``{spec: {trick: [(ess, placed, uniform placed) per decision]}}`` over ``hands`` hands."""
    weights = {spec: WorldWeights(make_agent(spec, game, seed=seed), epsilon) for spec in specs}
    players = make_agent(table, game, seed=seed)
    rng = np.random.default_rng(seed)
    out: dict[str, dict[int, list[tuple[float, float, float]]]] = {spec: {} for spec in specs}
    for h in range(hands):
        env = whist_env.GAMES[game].raw_env(episode="hand")
        env.reset(seed=seed + h)
        while not any(env.terminations.values()):
            name = env.agent_selection
            info = env.information_state(name)
            if name == "player_0" and info["phase"] == "play" and env.observe(name)["action_mask"].sum() > 1:
                trick = int(sum(env.game.tricks_won)) + 1
                worlds = [env.resample_from_infostate(name, rng) for _ in range(candidates)]
                shares = np.array([placed_share(w, env, 0) for w in worlds])
                for spec, weigher in weights.items():
                    logw = weigher.log_weights(worlds, 0)
                    if logw is None:
                        continue
                    w = np.exp(logw - logw.max())
                    out[spec].setdefault(trick, []).append(
                        (effective_sample_size(logw), float((w * shares).sum() / w.sum()), float(shares.mean())))
            env.step(policy_action(players, env, name))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="classic_whist", choices=sorted(whist_env.GAMES))
    parser.add_argument("--inference", nargs="+", default=["heuristic", "zoo"], help="inference policy specs (default: heuristic zoo)")
    parser.add_argument("--table", default="heuristic", help="agent spec playing every seat (default: heuristic)")
    parser.add_argument("--hands", type=int, default=10, help="hands (default 10)")
    parser.add_argument("--candidates", type=int, default=64, help="worlds weighed per decision (default 64)")
    parser.add_argument("--epsilon", type=float, default=0.1, help="softening of deterministic policies (default 0.1)")
    parser.add_argument("--seed", type=int, default=100)
    args = parser.parse_args()
    if args.hands < 1 or args.candidates < 2:
        parser.error("--hands must be >= 1 and --candidates >= 2")
    for spec in [*args.inference, args.table]:
        try:
            make_agent(spec, args.game)
        except (ValueError, OSError) as err:
            parser.error(f"bad agent spec {spec!r}: {err}")
    start = time.perf_counter()
    got = measure(args.game, args.inference, args.table, args.hands, args.candidates, args.epsilon, args.seed)
    print(f"{args.game}: player_0's card play at a {args.table} table, {args.hands} hands, {args.candidates} candidate worlds "
          f"a decision, epsilon {args.epsilon:g} ({time.perf_counter() - start:.0f} s)")
    print(f"{'inference':<14} {'trick':>5} {'decisions':>9} {'ESS':>7} {'placed':>8} {'uniform':>8} {'gain':>7}")
    for spec, by_trick in got.items():
        rows = [r for trick in sorted(by_trick) for r in by_trick[trick]]
        for trick in sorted(by_trick):
            a = np.array(by_trick[trick])
            print(f"{spec:<14} {trick:>5} {len(a):>9} {a[:, 0].mean():7.1f} {a[:, 1].mean():8.3f} {a[:, 2].mean():8.3f} "
                  f"{a[:, 1].mean() - a[:, 2].mean():+7.3f}")
        if rows:
            a = np.array(rows)
            print(f"{spec:<14} {'all':>5} {len(a):>9} {a[:, 0].mean():7.1f} {a[:, 1].mean():8.3f} {a[:, 2].mean():8.3f} "
                  f"{a[:, 1].mean() - a[:, 2].mean():+7.3f}")


if __name__ == "__main__":
    main()
