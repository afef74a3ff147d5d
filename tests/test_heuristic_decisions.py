"""Every rule-based player's decisions, pinned on a fixed set of deals.

Every baseline figure in README and the docs rests on the heuristics, so a refactor of their code
must not change one decision. Each case plays whole hands on the raw env with the game's
heuristic in some seats and seeded random players in the others (so that the heuristic also meets
positions its own play would not reach) and records the action ids the heuristic seats chose, in
order. ``tests/data/heuristic_decisions.json`` holds them; after a deliberate change of a
heuristic, rewrite it with ``python tests/test_heuristic_decisions.py --write`` and say why in the
commit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agents.heuristics import HEURISTICS
from agents.random_agent import RandomAgent
from whist_env import GAMES, games

DATA = Path(__file__).resolve().parent / "data" / "heuristic_decisions.json"
HANDS_PER_CASE = 40

#: case name -> (game, rule options); the defaults and every option the heuristics read.
CASES: dict[str, tuple[str, dict]] = {
    "classic": ("classic_whist", {}),
    "classic_rotation_no_honours": ("classic_whist", {"trump_mode": "fixed_rotation", "honours": False}),
    "minnesota": ("minnesota_whist", {}),
    "german": ("german_whist", {}),
    "german_over_six": ("german_whist", {"scoring": "over_six", "first_leader": "non_dealer"}),
    "romanian_3": ("romanian_whist", {"num_players": 3}),
    "romanian_4": ("romanian_whist", {}),
    "romanian_6_818": ("romanian_whist", {"num_players": 6, "schedule": "8-1-8", "trump_on_one_card_deals": True}),
    "bid_whist": ("bid_whist", {}),
    "bid_whist_wild": ("bid_whist", {"jokers_high": True, "deuces_wild": True, "downtown_aces": "bad",
                                     "big_joker": "black"}),
    "bid_whist_no_kitty": ("bid_whist", {"kitty": False, "downtown_beats_uptown": True}),
    "cutthroat": ("cutthroat_whist", {}),
    "cutthroat_super_jokers": ("cutthroat_whist", {"jokers_high": True, "big_joker": "black"}),
    "cutthroat_52": ("cutthroat_whist", {"deck": "52"}),
}
# A game whose heuristic has no case above is pinned on its descriptor's golden option sets
# (``GameSpec.golden_options``), so that a new game needs no line here.
CASES.update({f"{game}__{name}": (game, dict(options)) for game in sorted(set(HEURISTICS) - {g for g, _ in CASES.values()})
              for name, options in games.spec(game).golden_options.items()})


def heuristic_decisions(game: str, options: dict, hands: int = HANDS_PER_CASE) -> list[list[int]]:
    """The heuristic seats' action ids, hand by hand, over ``hands`` deals seeded 0, 1, ...

    Even deals seat the heuristic everywhere; odd deals alternate it with seeded random players.
    """
    env = GAMES[game].raw_env(**{"episode": "hand", **options})
    heuristic = HEURISTICS[game]()
    out = []
    for i in range(hands):
        env.reset(seed=i)
        n = len(env.possible_agents)
        policies = [heuristic if i % 2 == 0 or (s + i) % 2 == 0 else RandomAgent(seed=1000 * i + s) for s in range(n)]
        chosen = []
        while not (env.game.done or env.game.truncated):
            agent = env.agent_selection
            seat = int(agent.split("_")[1])
            action = int(policies[seat].act(env.observe(agent), env.information_state(agent)))
            if policies[seat] is heuristic:
                chosen.append(action)
            env.step(action)
        out.append(chosen)
    return out


def _recorded() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_heuristic_decisions_are_unchanged(case):
    game, options = CASES[case]
    recorded = _recorded()[case]
    assert recorded["game"] == game and recorded["options"] == options
    got = heuristic_decisions(game, options)
    for hand, (want, have) in enumerate(zip(recorded["decisions"], got)):
        first = next((k for k, (a, b) in enumerate(zip(want, have)) if a != b), min(len(want), len(have)))
        assert have == want, f"{case}: deal {hand} differs from decision {first} on (recorded {want[first:first + 5]}, now {have[first:first + 5]})"
    assert len(got) == len(recorded["decisions"])


def test_every_heuristic_has_a_pinned_case():
    assert {game for game, _ in CASES.values()} == set(HEURISTICS)
    assert set(_recorded()) == set(CASES)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_heuristic_decisions.py --write   (rewrites " + str(DATA) + ")")
    table = {case: {"game": g, "options": o, "decisions": heuristic_decisions(g, o)} for case, (g, o) in CASES.items()}
    DATA.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {DATA}: {sum(len(d) for t in table.values() for d in t['decisions'])} decisions")
