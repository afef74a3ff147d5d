"""Agents: the random baseline, the Classic Whist heuristic and the agent registry."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from agents.base import Policy
from agents.heuristics import ClassicHeuristicAgent
from agents.random_agent import RandomAgent
from agents.registry import make_agent
from whist_env import classic_whist_v0
from whist_env.engine.cards import SUITS, card_from_str, card_to_str, mask_of
from whist_env.engine.tricks import led_suit, legal_cards, natural_context, trick_winner


# ------------------------------------------------------------------------------ helpers
def play_hands(policies, num_hands: int, seed: int, **options) -> int:
    """Play ``num_hands`` hands on the raw env (an illegal action raises); returns decisions made."""
    env = classic_whist_v0.raw_env(episode="hand", **options)
    decisions = 0
    for i in range(num_hands):
        env.reset(seed=seed + i)
        while not (env.game.done or env.game.truncated):
            agent = env.agent_selection
            obs = env.observe(agent)
            action = policies[int(agent.split("_")[1])].act(obs, env.information_state(agent))
            assert obs["action_mask"][action] == 1, (agent, action)
            env.step(action)
            decisions += 1
    return decisions


def situation(seat: int, hand: list[str], trump: str, trick=(), history=(), dealer: int = 3, turn_up=None):
    """An observation and ``information_state`` as the env builds them, for a constructed position.

    ``history`` is a list of complete tricks, each a list of ``(seat, card)`` in play order;
    ``trick`` is the trick in progress. The mask is the legal set of RULES.md §1.4.
    """
    ctx = natural_context(SUITS.index(trump))
    events = [] if turn_up is None else [("turn_up", dealer, turn_up)]
    for t in history:
        ids = [(s, card_from_str(c)) for s, c in t]
        events += [("play", s, card_to_str(c)) for s, c in ids]
        events.append(("trick", ids[0][0], trick_winner(ids, ctx)))
    events += [("play", s, c) for s, c in trick]
    trick_ids = [card_from_str(c) for _, c in trick]
    hand_mask = mask_of(card_from_str(c) for c in hand)
    legal = legal_cards(hand_mask, led_suit(trick_ids, ctx) if trick_ids else None, ctx)
    mask = np.array([legal >> a & 1 for a in range(52)], dtype=np.int8)
    info = {
        "seat": seat,
        "hand": tuple(hand),
        "trump": trump,
        "trick": tuple(trick),
        "leader": trick[0][0] if trick else seat,
        "events": tuple(events),
        "dealer": dealer,
        "turn_up": turn_up,
    }
    return {"observation": np.zeros(1, dtype=np.float32), "action_mask": mask}, info


def heuristic_play(**kwargs) -> str:
    obs, info = situation(**kwargs)
    return card_to_str(ClassicHeuristicAgent().act(obs, info))


# ------------------------------------------------------------------------------ random agent
def test_random_agent_only_picks_legal_actions_and_is_seeded():
    agent = RandomAgent(seed=3)
    mask = np.zeros(52, dtype=np.int8)
    mask[[5, 17, 40]] = 1
    picks = [agent.act({"observation": np.zeros(1), "action_mask": mask}) for _ in range(200)]
    assert set(picks) == {5, 17, 40}
    again = RandomAgent(seed=3)
    assert picks == [again.act({"observation": np.zeros(1), "action_mask": mask}) for _ in range(200)]
    assert isinstance(agent, Policy) and agent.name == "random"


def test_random_agent_plays_whole_hands_legally():
    agent = RandomAgent(seed=0)
    assert play_hands([agent] * 4, num_hands=20, seed=100) == 20 * 52


def test_random_agent_rejects_an_empty_mask():
    with pytest.raises(ValueError, match="no legal action"):
        RandomAgent().act({"observation": np.zeros(1), "action_mask": np.zeros(52, dtype=np.int8)})


# ------------------------------------------------------------------------------ heuristic: legality
def test_heuristic_only_picks_legal_cards_over_many_deals():
    h = ClassicHeuristicAgent()
    assert isinstance(h, Policy) and h.name == "heuristic"
    assert play_hands([h, RandomAgent(1), h, RandomAgent(2)], num_hands=60, seed=0) == 60 * 52
    assert play_hands([h] * 4, num_hands=40, seed=1000, trump_mode="fixed_rotation") == 40 * 52


def test_heuristic_needs_the_information_state():
    obs, _ = situation(seat=0, hand=["AS", "2C"], trump="H")
    with pytest.raises(ValueError, match="info_state"):
        ClassicHeuristicAgent().act(obs, None)


# ------------------------------------------------------------------------------ heuristic: decisions
def test_second_hand_plays_low():
    card = heuristic_play(seat=1, hand=["KH", "8H", "3H", "5C", "9S"], trump="S", trick=[(0, "5H")])
    assert card == "3H"


def test_second_hand_covers_an_honour():
    card = heuristic_play(seat=1, hand=["KH", "8H", "3H", "5C"], trump="S", trick=[(0, "QH")])
    assert card == "KH"


def test_third_hand_high_plays_lowest_of_equals():
    # Partner (seat 0) led low, second hand played the 6: third hand plays high, Q from K Q.
    card = heuristic_play(seat=2, hand=["KC", "QC", "3C", "7D"], trump="S", trick=[(0, "4C"), (1, "6C")])
    assert card == "QC"


def test_third_hand_does_not_overtake_partners_master():
    card = heuristic_play(seat=2, hand=["KH", "5H", "7D"], trump="S", trick=[(0, "AH"), (1, "3H")])
    assert card == "5H"


def test_fourth_hand_does_not_beat_partners_winning_card():
    card = heuristic_play(seat=3, hand=["KD", "2D", "9C"], trump="S", trick=[(0, "4D"), (1, "QD"), (2, "7D")])
    assert card == "2D"


def test_fourth_hand_wins_as_cheaply_as_possible():
    card = heuristic_play(seat=3, hand=["AD", "QD", "3D", "4C"], trump="S", trick=[(0, "9D"), (1, "2D"), (2, "JD")])
    assert card == "QD"


def test_ruffs_cheaply_when_void_and_opponents_winning():
    card = heuristic_play(seat=3, hand=["9S", "3S", "4C", "8D"], trump="S", trick=[(0, "KH"), (1, "2H"), (2, "AH")])
    assert card == "3S"


def test_overruffs_an_opponents_ruff():
    card = heuristic_play(seat=3, hand=["9S", "3S", "4C", "8D"], trump="S", trick=[(0, "KH"), (1, "2H"), (2, "5S")])
    assert card == "9S"


def test_does_not_trump_a_trick_partner_is_winning():
    card = heuristic_play(seat=3, hand=["9S", "3S", "4C", "8D"], trump="S", trick=[(0, "4H"), (1, "AH"), (2, "5H")])
    assert card in ("4C", "8D")


def test_discards_from_the_weakest_suit():
    # Void in hearts, no trumps: keep the strong clubs, throw a diamond (not the lower 3C).
    card = heuristic_play(seat=3, hand=["AC", "KC", "3C", "9D", "6D"], trump="S", trick=[(0, "AH"), (1, "2H"), (2, "5H")])
    assert card == "6D"


def test_leads_top_of_a_sequence_from_the_long_strong_suit():
    hand = ["KS", "QS", "JS", "4S", "5H", "3H", "9D", "7D", "4D", "8C", "6C", "3C", "2C"]
    assert heuristic_play(seat=1, hand=hand, trump="H", dealer=0) == "KS"


def test_leads_trumps_when_holding_many():
    hand = ["QH", "9H", "8H", "6H", "4H", "2H", "9D", "7D", "4D", "8C", "6C", "3C", "5S"]
    card = heuristic_play(seat=1, hand=hand, trump="H", dealer=0)
    assert card.endswith("H")


def test_tracks_played_cards_to_cash_a_master():
    # The ace of diamonds fell in the first trick, so the king is now a master: cash it.
    history = [[(0, "AD"), (1, "3D"), (2, "5D"), (3, "6D")]]
    hand = ["KD", "8D", "JC", "9C", "7C", "5C", "2S", "4S", "6S", "8S", "2H", "3H"]
    assert heuristic_play(seat=0, hand=hand, trump="H", history=history) == "KD"
    # Without that history the king is not a master and is not led.
    hand_without = ["KD", "8D", "JC", "9C", "7C", "5C", "2S", "4S", "6S", "8S", "2H", "3H", "4H"]
    assert heuristic_play(seat=0, hand=hand_without, trump="H") != "KD"


def test_inferred_void_stops_cashing_into_a_ruff():
    # Seat 1 (an opponent of seat 0) showed out of clubs and may hold trumps: do not lead the ace.
    history = [[(2, "2C"), (3, "3C"), (0, "4C"), (1, "5D")]]
    hand = ["AC", "7C", "9D", "8D", "2S", "4S", "6S", "8S", "TS", "2H", "3H", "4H"]
    card = heuristic_play(seat=0, hand=hand, trump="H", history=history)
    assert card != "AC"


def test_partner_void_lead_for_a_ruff():
    # Partner (seat 2) showed out of diamonds; opponents follow diamonds: lead one for partner to ruff.
    history = [[(1, "3D"), (2, "2C"), (3, "4D"), (0, "AD")]]
    hand = ["9D", "5D", "JC", "9C", "7C", "2S", "4S", "6S", "8S", "TS", "2H", "3H"]
    assert heuristic_play(seat=0, hand=hand, trump="H", history=history) == "5D"


def test_heuristic_is_deterministic():
    obs, info = situation(seat=1, hand=["KH", "8H", "3H", "5C"], trump="S", trick=[(0, "5H")])
    h = ClassicHeuristicAgent()
    assert len({h.act(obs, info) for _ in range(5)}) == 1


# ------------------------------------------------------------------------------ registry
def test_make_agent_builds_random_and_heuristic():
    assert isinstance(make_agent("random", "classic_whist", seed=1), RandomAgent)
    assert isinstance(make_agent("Heuristic", "classic_whist"), ClassicHeuristicAgent)


def test_make_agent_rejects_bad_specs():
    with pytest.raises(ValueError, match="unknown agent spec"):
        make_agent("minimax", "classic_whist")
    with pytest.raises(ValueError, match="classic_whist"):
        make_agent("heuristic", "no_such_game")  # every game now has a heuristic
    with pytest.raises(ValueError, match="needs a path"):
        make_agent("checkpoint:", "classic_whist")


def test_make_agent_loads_checkpoints_through_neural_agent(monkeypatch):
    calls = []

    class FakeNeuralAgent:
        name = "neural"

        @classmethod
        def from_checkpoint(cls, path, game=None, greedy=True, device="cpu"):
            calls.append((path, game))
            return cls()

        def act(self, observation, info_state=None):
            return 0

    module = types.ModuleType("agents.learned.neural")
    module.NeuralAgent = FakeNeuralAgent
    monkeypatch.setitem(sys.modules, "agents.learned.neural", module)
    agent = make_agent("checkpoint:runs/x/final.pt", "classic_whist")
    assert isinstance(agent, FakeNeuralAgent)
    assert calls == [("runs/x/final.pt", "classic_whist")]


# ------------------------------------------------------------------------------ canonical specs
PIMC_DEFAULT = "pimc:exact=auto,rollout=heuristic,rollouts=48,worlds=32,z=1"


@pytest.mark.parametrize("spec", ["pimc", "PIMC", "pimc:z=1", "pimc:z=1.0,worlds=32", " Pimc: Z = 1.0 , WORLDS=32 ",
                                  "pimc:exact=AUTO,rollout=Heuristic", "pimc:seed=7", PIMC_DEFAULT])
def test_canonical_spec_gives_one_name_to_one_player(spec):
    from agents.registry import canonical_spec

    assert canonical_spec(spec, "classic_whist") == PIMC_DEFAULT


def test_canonical_spec_of_every_kind():
    from agents.registry import canonical_spec

    cases = {
        "pimc:worlds=9": "pimc:exact=auto,rollout=heuristic,rollouts=48,worlds=9,z=1",
        "pimc:exact=6,z=0.25": "pimc:exact=6,rollout=heuristic,rollouts=48,worlds=32,z=0.25",
        "ISMCTS": "ismcts:c=0.7,iters=200,rollout=heuristic,seconds=0",
        "ismcts:ITERS=20,c=0.70,Rollout=RANDOM": "ismcts:c=0.7,iters=20,rollout=random,seconds=0",
        "Random": "random",
        "HEURISTIC": "heuristic",
        "zoo": "zoo:classic_whist",
        "Zoo:classic_whist": "zoo:classic_whist",
        "Checkpoint:Runs/Classic/Final.pt": "checkpoint:Runs/Classic/Final.pt",  # the path as typed
        "SB3:runs/SB3/model.zip": "sb3:runs/SB3/model.zip",
        "rllib:runs/RLlib": "rllib:runs/RLlib",
        # the nested spec is canonical too (kind lower case, path as typed, even with a comma)
        "pimc:rollout=Checkpoint:Runs/a,b.pt,worlds=4": "pimc:exact=auto,rollout=checkpoint:Runs/a,b.pt,rollouts=48,worlds=4,z=1",
    }
    for spec, want in cases.items():
        assert canonical_spec(spec, "classic_whist") == want, spec
        assert canonical_spec(want, "classic_whist") == want, want  # its own canonical text


def test_canonical_spec_fills_in_the_defaults_of_today(monkeypatch):
    """Defaults are written out, so a change of a default names a new player."""
    from agents.registry import canonical_spec
    from agents.search import PIMCAgent

    defaults = PIMCAgent.__init__.__defaults__
    assert defaults == (32, None, 48, 1.0, "heuristic", None)  # worlds, exact, rollouts, z, rollout, seed
    monkeypatch.setattr(PIMCAgent.__init__, "__defaults__", (16, None, 48, 1.0, "random", None))
    assert canonical_spec("pimc", "classic_whist") == "pimc:exact=auto,rollout=random,rollouts=48,worlds=16,z=1"


@pytest.mark.parametrize("spec", ["minimax", "random:x", "checkpoint:", "sb3:", "rllib:", "zoo:german_whist", "zoo:bridge",
                                  "pimc:worlds=0", "pimc:worlds=two", "pimc:foo=1", "pimc:z=-1", "pimc:seed=-1", "pimc:,",
                                  "pimc:rollout=pimc", "pimc:rollout=minimax", "ismcts:iters=0", "ismcts:rollout=checkpoint:"])
def test_canonical_spec_raises_what_make_agent_raises(spec):
    from agents.registry import canonical_spec

    with pytest.raises(ValueError) as built:
        make_agent(spec, "classic_whist")
    with pytest.raises(ValueError) as named:
        canonical_spec(spec, "classic_whist")
    assert str(named.value) == str(built.value)
    with pytest.raises(ValueError, match="no heuristic agent for game 'no_such_game'"):
        canonical_spec("heuristic", "no_such_game")
