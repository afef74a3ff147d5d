"""PIMC's policy-based inference (agents/search/inference.py; Rebstock et al., CoG 2019): its
options, the weights of hand-built worlds, the replay of every game's hands, the resampling,
today's play when it is off, and no peeking at the hidden cards when it is on."""

from __future__ import annotations

import math

import numpy as np
import pytest

import whist_env
from agents.registry import make_agent
from agents.search import PIMCAgent
from agents.search.inference import WorldWeights, effective_sample_size, softened_log_prob, systematic_resample
from whist_env.envs.policy_action import policy_action

GAMES = sorted(whist_env.GAMES)


# ------------------------------------------------------------------------------ options
def test_inference_options_and_name():
    off = make_agent("pimc", "classic_whist")
    assert (off.inference, off.inference_spec, off.candidates, off.epsilon) == (None, None, 4, 0.1)
    assert off.name == "pimc:worlds=32,exact=auto,rollouts=48,z=1,rollout=heuristic"  # as before the option
    assert make_agent("pimc:inference=None", "classic_whist").name == off.name
    on = make_agent("pimc:worlds=3,inference=Heuristic,candidates=2,epsilon=0.25", "classic_whist", seed=1)
    assert (on.inference_spec, on.candidates, on.epsilon, on.inference.epsilon) == ("Heuristic", 2, 0.25, 0.25)
    assert on.name == "pimc:worlds=3,exact=auto,rollouts=48,z=1,rollout=heuristic,inference=Heuristic,candidates=2,epsilon=0.25"
    assert on.inference.mask_only  # the rule-based player is asked on the rules object


@pytest.mark.parametrize("spec, message", [
    ("pimc:inference=heuristic,epsilon=0", "epsilon must be a number with 0 < epsilon < 1, got 0.0"),
    ("pimc:inference=heuristic,epsilon=1", "epsilon must be a number with 0 < epsilon < 1, got 1.0"),
    ("pimc:epsilon=1.5", "epsilon must be a number with 0 < epsilon < 1, got 1.5"),  # checked when off too
    ("pimc:epsilon=-0.1", "epsilon must be a finite number >= 0, got -0.1"),
    ("pimc:epsilon=nan", "epsilon must be a finite number >= 0, got nan"),
    ("pimc:epsilon=small", "epsilon='small' is not a float"),
    ("pimc:candidates=0", "candidates must be an int >= 1, got 0"),
    ("pimc:candidates=2.5", "candidates='2.5' is not an int"),
    ("pimc:inference=nonsense", "unknown agent spec 'nonsense'"),
    ("pimc:inference=pimc", "inference='pimc' is a search agent"),
    ("pimc:inference=ismcts:iters=2", "inference='ismcts:iters=2' is a search agent"),
    ("pimc:inference=checkpoint:", "agent spec 'checkpoint:' needs a path"),
])
def test_inference_option_errors(spec, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_agent(spec, "classic_whist")


def test_inference_argument_errors():
    with pytest.raises(ValueError, match="inference must be an agent spec or 'none', got 3"):
        PIMCAgent("classic_whist", make_policy=make_agent, inference=3)
    with pytest.raises(ValueError, match="epsilon must be a number with 0 < epsilon < 1, got 0"):
        WorldWeights(make_agent("heuristic", "classic_whist"), 0)
    with pytest.raises(ValueError, match="got True"):
        WorldWeights(make_agent("heuristic", "classic_whist"), True)


# ------------------------------------------------------------------------------ the pieces
def test_softened_probabilities_resampling_and_effective_sample_size():
    assert softened_log_prob(True, 13, 0.1) == pytest.approx(math.log(0.9))
    assert softened_log_prob(False, 13, 0.1) == pytest.approx(math.log(0.1 / 12))
    assert softened_log_prob(False, 1, 0.1) == 0.0  # a forced action says nothing
    assert effective_sample_size(np.array([0.0, 0.0])) == pytest.approx(2.0)
    assert effective_sample_size(np.array([0.0, -np.inf])) == pytest.approx(1.0)
    assert effective_sample_size(np.log([1.0, 3.0])) == pytest.approx(16 / 10)
    assert effective_sample_size(np.array([-np.inf, -np.inf, -np.inf])) == 3.0  # all gone: uniform, as resampled
    assert effective_sample_size(np.array([-2000.0, -2001.0])) == pytest.approx(effective_sample_size(np.array([0.0, -1.0])))
    rng = np.random.default_rng(0)
    # weights 1/4, 0, 3/4: 4 draws give candidate 0 once and candidate 2 three times, whatever the uniform
    for _ in range(20):
        assert systematic_resample(np.array([0.0, -np.inf, math.log(3)]), 4, rng).tolist() == [0, 2, 2, 2]
    # log-weights far below exp's range are only relative: no underflow
    assert systematic_resample(np.array([-5000.0, -5000.0 + math.log(3)]), 4, rng).tolist() == [0, 1, 1, 1]
    # all weights gone (-inf): uniform
    assert systematic_resample(np.array([-np.inf, -np.inf]), 4, rng).tolist() == [0, 0, 1, 1]
    assert systematic_resample(np.array([0.0, 0.0, 0.0]), 3, rng).tolist() == [0, 1, 2]


# ------------------------------------------------------------------------------ hand-built worlds
#: Classic Whist, player_0 deals (the turn-up KH is its), player_1 leads the AH, player_2 (the
#: partner) plays the 3H and player_3 the 5H; player_0 is to play. Both tables agree on all that
#: player_0 knows. In LIKELY every one of the three plays is the heuristic's own choice; in
#: UNLIKELY the heuristic would not lead the AH from player_1's hand there, and follows as played.
OWN = ["4C", "8C", "JC", "AC", "4D", "7D", "8D", "JD", "6H", "KH", "2S", "4S", "AS"]
LIKELY = {"player_0": OWN,
          "player_1": ["2C", "3C", "6C", "KC", "2D", "9D", "2H", "9H", "TH", "JH", "AH", "6S", "KS"],
          "player_2": ["TC", "QC", "3D", "5D", "6D", "AD", "3H", "4H", "8H", "7S", "8S", "9S", "QS"],
          "player_3": ["5C", "7C", "9C", "TD", "QD", "KD", "5H", "7H", "QH", "3S", "5S", "TS", "JS"]}
UNLIKELY = {"player_0": OWN,
            "player_1": ["3C", "6C", "7C", "9C", "KC", "2D", "3D", "2H", "4H", "AH", "9S", "QS", "KS"],
            "player_2": ["2C", "5C", "QC", "5D", "QD", "KD", "AD", "3H", "7H", "TH", "JH", "7S", "8S"],
            "player_3": ["TC", "6D", "9D", "TD", "5H", "8H", "9H", "QH", "3S", "5S", "6S", "TS", "JS"]}
PLAYS = ["AH", "3H", "5H"]


def _table(hands):
    env = whist_env.classic_whist_v0.raw_env(episode="hand", honours=False)
    env.reset(seed=0, options={"hands": hands, "dealer": "player_0", "turn_up": "KH"})
    for label in PLAYS:
        env.step(env.action_id(label))
    assert env.agent_selection == "player_0"
    return env


def test_weights_of_hand_built_worlds_are_exact():
    likely, unlikely = _table(LIKELY), _table(UNLIKELY)
    assert dict(likely.information_state("player_0")) == dict(unlikely.information_state("player_0"))
    weights = WorldWeights(make_agent("heuristic", "classic_whist"), 0.1)
    got = weights.log_weights([likely, unlikely], 0)
    # LIKELY: three choices of the heuristic; UNLIKELY: a lead it would not make among 13 cards,
    # then two follows it would make
    assert got.tolist() == pytest.approx([3 * math.log(0.9), math.log(0.1 / 12) + 2 * math.log(0.9)])
    assert got[0] > got[1]
    # the observer's own actions are not weighted: from player_1's seat only player_2's and
    # player_3's follows count (both the heuristic's own in either world)
    assert weights.log_weights([likely, unlikely], 1).tolist() == pytest.approx([2 * math.log(0.9)] * 2)


class _Uniform:
    """A policy with probabilities: uniform over the legal actions (or 0 everywhere, floored)."""

    uses_observation_vector = True

    def __init__(self, zero=False):
        self.zero, self.seen = zero, []

    def act(self, observation, info_state=None):  # pragma: no cover - never asked for its choice
        raise AssertionError("a policy with probabilities is not asked for its choice")

    def action_probabilities(self, observation, info_state=None):
        mask = observation["action_mask"].astype(float)
        self.seen.append(observation["observation"].shape)
        return mask * 0 if self.zero else mask / mask.sum()


def test_weights_of_a_policy_with_probabilities_and_its_floor():
    likely, unlikely = _table(LIKELY), _table(UNLIKELY)
    uniform = _Uniform()
    got = WorldWeights(uniform, 0.1).log_weights([likely, unlikely], 0)
    # 13 cards to lead from; 3 hearts (LIKELY) or 4 (UNLIKELY) to follow with, for each follower
    assert got.tolist() == pytest.approx([math.log(1 / 13) + 2 * math.log(1 / 3), math.log(1 / 13) + 2 * math.log(1 / 4)])
    obs_size = likely.observation_space("player_0")["observation"].shape
    assert uniform.seen == [obs_size] * 6  # asked with the observation vector, once per other player's action
    floored = WorldWeights(_Uniform(zero=True), 0.1).log_weights([likely, unlikely], 0)
    assert floored.tolist() == pytest.approx([math.log(0.1 / 12) + 2 * math.log(0.1 / 2),
                                              math.log(0.1 / 12) + 2 * math.log(0.1 / 3)])


def test_an_observation_policy_weighs_as_the_rules_object_path():
    """The heuristic asked through the environment's observation (as a learned agent is) gives
    the weights it gives on the rules object."""
    heuristic = make_agent("heuristic", "classic_whist")

    class Observing:
        uses_observation_vector = True

        def act(self, observation, info_state=None):
            assert observation["observation"].ndim == 1
            return heuristic.act(observation, info_state)

    worlds = [_table(LIKELY), _table(UNLIKELY)]
    assert not WorldWeights(Observing(), 0.1).mask_only
    assert (WorldWeights(Observing(), 0.1).log_weights(worlds, 0).tolist()
            == WorldWeights(heuristic, 0.1).log_weights(worlds, 0).tolist())


# ------------------------------------------------------------------------------ replay in every game
@pytest.mark.parametrize("game", GAMES)
def test_every_decision_of_a_hand_replays_in_its_worlds(game):
    """Every world drawn at every decision of a hand replays from its deal to the world's own
    position (checked inside), except German Whist's once a card has been drawn from the stock."""
    heuristic = make_agent("heuristic", game)
    weights = WorldWeights(heuristic, 0.1)
    env = whist_env.GAMES[game].raw_env(episode="hand")
    env.reset(seed=10007)
    rng = np.random.default_rng(1)
    decisions = 0
    while not any(env.terminations.values()):
        agent = env.agent_selection
        worlds = [env.resample_from_infostate(agent, rng) for _ in range(2)]
        got = weights.log_weights(worlds, env.possible_agents.index(agent))
        stock_drawn = any(e[0] == "stock_draw" for e in env.game.events)
        assert (got is None) == stock_drawn, (game, env.game.phase, env.game.actions_in_hand)
        if got is not None:
            assert got.shape == (2,) and np.all(got <= 0) and np.all(np.isfinite(got))
        decisions += 1
        env.step(policy_action(heuristic, env, agent))
    assert decisions >= 4


def test_the_real_table_weighs_as_the_heuristic_played_it():
    """A table played by the heuristic, taken as a world, has every other player's action the
    heuristic's own: its log-weight is log(1 - epsilon) per action with a choice."""
    heuristic = make_agent("heuristic", "bid_whist")
    env = whist_env.bid_whist_v0.raw_env(episode="hand")
    env.reset(seed=10011)
    choices = 0
    while env.game.phase != "play" or env.game.trick_number < 2:
        agent = env.agent_selection
        if agent != "player_0" and env.observe(agent)["action_mask"].sum() > 1 and env.game.phase != "discard":
            choices += 1  # a discard is not public: not weighted
        env.step(policy_action(heuristic, env, agent))
    got = WorldWeights(heuristic, 0.2).log_weights([env], 0)
    assert choices > 5 and got.tolist() == pytest.approx([choices * math.log(0.8)])


# ------------------------------------------------------------------------------ PIMC with inference
def test_pimc_draws_candidates_times_worlds_and_keeps_worlds():
    env = _table(UNLIKELY)
    draws = []
    resample = env.resample_from_infostate

    def counting(agent, rng=None):
        draws.append(agent)
        return resample(agent, rng)

    env.resample_from_infostate = counting
    pimc = PIMCAgent("classic_whist", make_policy=make_agent, worlds=3, exact=13, seed=4, inference="heuristic", candidates=5)
    kept = pimc._draw_worlds(env, "player_0", 3)
    assert len(draws) == 15 and len(kept) == 3 and 1.0 <= pimc.last_ess <= 15.0
    action = pimc.act_in_env(env, "player_0")
    assert len(draws) == 30 and env.observe("player_0")["action_mask"][action] == 1
    assert all(agent == "player_0" for agent in draws)


def test_pimc_keeps_the_likely_worlds():
    """From UNLIKELY's table, worlds in which player_1 would not lead the AH are mostly dropped:
    the kept worlds' mean log-weight beats the candidates'."""
    env = _table(UNLIKELY)
    pimc = PIMCAgent("classic_whist", make_policy=make_agent, worlds=16, seed=3, inference="heuristic", candidates=4)
    weights = WorldWeights(make_agent("heuristic", "classic_whist"), 0.1)
    rng = np.random.default_rng(3)  # the agent's generator: the same 64 candidates
    pool_weights = weights.log_weights([env.resample_from_infostate("player_0", rng) for _ in range(64)], 0)
    kept = pimc._draw_worlds(env, "player_0", 16)
    assert pimc.last_ess == pytest.approx(effective_sample_size(pool_weights)) and pimc.last_ess < 32
    assert weights.log_weights(kept, 0).mean() > pool_weights.mean() + 1.0


def test_german_whist_falls_back_to_uniform_worlds_once_the_stock_is_drawn():
    env = whist_env.german_whist_v0.raw_env(episode="hand")
    env.reset(seed=10003)
    heuristic = make_agent("heuristic", "german_whist")
    while not any(e[0] == "stock_draw" for e in env.game.events) or env.observe(env.agent_selection)["action_mask"].sum() < 2:
        env.step(policy_action(heuristic, env, env.agent_selection))
    agent = env.agent_selection
    on = PIMCAgent("german_whist", make_policy=make_agent, worlds=2, exact=0, rollouts=0, seed=2, inference="heuristic")
    off = PIMCAgent("german_whist", make_policy=make_agent, worlds=2, exact=0, rollouts=0, seed=2)
    first = [w.game.hands for w in on._draw_worlds(env, agent, 2)]
    assert on.last_ess is None and first == [w.game.hands for w in off._draw_worlds(env, agent, 2)]


def test_pimc_with_a_learned_inference_policy_plays_a_decision():
    pytest.importorskip("torch")
    env = _table(UNLIKELY)
    pimc = make_agent("pimc:worlds=2,exact=13,inference=zoo,candidates=2", "classic_whist", seed=0)
    assert not pimc.inference.mask_only
    action = pimc.act_in_env(env, "player_0")
    assert env.observe("player_0")["action_mask"][action] == 1 and pimc.last_ess is not None


@pytest.mark.parametrize("game", ["classic_whist", "bid_whist", "romanian_whist"])
def test_a_learned_agent_gives_its_softmax_policy(game):
    pytest.importorskip("torch")
    import torch

    agent = make_agent("zoo", game)
    env = whist_env.GAMES[game].raw_env(episode="hand")
    env.reset(seed=3)
    for _ in range(12):  # bids (a bid head's epsilon-greedy policy) and cards
        name = env.agent_selection
        observation = env.observe(name)
        probs = agent.action_probabilities(observation, env.information_state(name))
        mask = observation["action_mask"]
        logits = agent.network.logits(torch.as_tensor(observation["observation"])[None], torch.as_tensor(mask)[None])[0]
        expected = torch.softmax(logits.detach().double(), -1).numpy()
        assert probs.dtype == np.float64 and probs.shape == mask.shape
        assert probs.sum() == pytest.approx(1.0) and probs[mask == 0].sum() < 1e-12
        assert probs == pytest.approx(expected, abs=1e-12)
        assert int(np.argmax(probs)) == agent.act(observation)
        env.step(agent.act(observation))


def test_learned_inference_weighs_worlds_by_the_softmax_not_the_argmax():
    pytest.importorskip("torch")
    agent = make_agent("zoo", "classic_whist")
    likely, unlikely = _table(LIKELY), _table(UNLIKELY)
    weights = WorldWeights(agent, 0.1)
    assert weights.probabilities is not None
    expected = []
    for world in (likely, unlikely):
        replay = world.clone()
        replay.game.rewind_hand()
        total = 0.0
        for seat, action in world.game.history():
            if seat != 0:
                name = replay.possible_agents[seat]
                p = agent.action_probabilities(replay.observe(name), None)
                total += math.log(max(p[action], 0.1 / (replay.observe(name)["action_mask"].sum() - 1)))
            replay.game.apply(action)
        expected.append(total)
    assert weights.log_weights([likely, unlikely], 0).tolist() == pytest.approx(expected)
    softened = WorldWeights(_ArgmaxOnly(agent), 0.1).log_weights([likely, unlikely], 0)
    assert softened.tolist() != pytest.approx(expected)


class _ArgmaxOnly:
    """A learned agent's choices without its probabilities."""

    def __init__(self, agent):
        self.agent, self.name = agent, agent.name

    def act(self, observation, info_state=None):
        return self.agent.act(observation, info_state)


#: The actions ``pimc:worlds=3,exact=4,rollouts=12`` (seed 5) chose for player_0 and player_2
#: in the first hand of seed 10001 against the
#: heuristic before the inference option existed: card play (solved and rolled out), the Bid
#: Whist auction, discards and declaration, Romanian exact bids (Romanian's recorded again when
#: its bids came to be valued by rollouts of each bid: its first bid is bid:3, no longer bid:2).
TODAY = {
    "classic_whist": [38, 26, 37, 28, 46, 49, 12, 0, 50, 40, 48, 42, 7, 1, 14, 24, 19, 18, 20, 5, 35, 31, 10, 45, 33, 34],
    "bid_whist": [64, 54, 26, 28, 30, 33, 35, 42, 76, 8, 52, 24, 16, 51, 40, 47, 10, 29, 1, 25, 19, 2, 12, 36, 17, 5, 32,
                  20, 18, 23, 21, 22, 7],
    "romanian_whist": [55, 53, 12, 5, 11, 45, 48, 49, 31, 32, 37, 18, 20, 25, 21, 24, 44, 22],
}


@pytest.mark.parametrize("spec", ["pimc:worlds=3,exact=4,rollouts=12", "pimc:worlds=3,exact=4,rollouts=12,inference=none,candidates=7"])
@pytest.mark.parametrize("game", sorted(TODAY))
def test_inference_off_plays_as_before(game, spec):
    env = whist_env.GAMES[game].raw_env(episode="hand")
    env.reset(seed=10001)
    pimc = make_agent(spec, game, seed=5)
    heuristic = make_agent("heuristic", game)
    seq = []
    while not any(env.terminations.values()):
        agent = env.agent_selection
        if agent in ("player_0", "player_2"):
            seq.append(policy_action(pimc, env, agent))
            env.step(seq[-1])
        else:
            env.step(policy_action(heuristic, env, agent))
    assert seq == TODAY[game]


# ------------------------------------------------------------------------------ no peeking
def _position(game, seed, card_play, max_tricks_left=99):
    """A decision with a choice after at least two actions of other players this hand: card play
    with at most ``max_tricks_left`` cards in hand, or a bidding phase."""
    heuristic = make_agent("heuristic", game)
    for attempt in range(seed, seed + 50):
        env = whist_env.GAMES[game].raw_env(episode="hand")
        env.reset(seed=attempt)
        while not any(env.terminations.values()):
            agent = env.agent_selection
            g = env.game
            others = sum(1 for e in g.events if len(e) > 1 and e[0] in ("play", "call", "bid") and e[1] != env.possible_agents.index(agent))
            phases = g.CARD_PLAY_PHASES if card_play else g.BIDDING_PHASES
            legal = np.flatnonzero(env.observe(agent)["action_mask"])
            if (g.phase in phases and others >= 2 and len(legal) > 1
                    and (not card_play or len(env.information_state(agent)["hand"]) <= max_tricks_left)):
                return env, agent
            env.step(policy_action(heuristic, env, agent))
    raise AssertionError("no position")


NO_PEEK = [(game, "play", exact) for game in GAMES for exact in (0, 4)]
NO_PEEK += [("bid_whist", "bid", 0), ("romanian_whist", "bid", 0), ("romanian_whist", "bid", 4)]


@pytest.mark.parametrize("game, kind, exact", NO_PEEK)
def test_pimc_with_inference_does_not_depend_on_the_hidden_cards(game, kind, exact):
    env, agent = _position(game, 3, kind == "play", exact or 99)
    other = env.resample_from_infostate(agent, np.random.default_rng(99))  # same knowledge, other hidden cards
    seat = env.possible_agents.index(agent)
    assert dict(other.information_state(agent)) == dict(env.information_state(agent))
    hidden_differ = [h for s, h in enumerate(other.game.hands) if s != seat] != [h for s, h in enumerate(env.game.hands) if s != seat]
    assert hidden_differ or (game == "german_whist" and exact)  # once the stock is gone, German hands are known

    def decide(table):
        pimc = PIMCAgent(game, make_policy=make_agent, worlds=3, exact=exact, seed=7, inference="heuristic", candidates=3)
        return pimc.act_in_env(table, agent), pimc.last_ess

    (a, ess_a), (b, ess_b) = decide(env), decide(other)
    assert a == b and ess_a == ess_b and env.observe(agent)["action_mask"][a] == 1


def test_canonical_spec_names_inference_only_when_it_is_on():
    from agents.registry import canonical_spec, loaded_files

    today = "pimc:exact=auto,rollout=heuristic,rollouts=48,worlds=32,z=1"
    for spec in ("pimc", "pimc:inference=none", "pimc:inference=None,candidates=9,epsilon=0.3"):
        assert canonical_spec(spec, "classic_whist") == today, spec
    on = "pimc:candidates=4,epsilon=0.1,exact=auto,inference=zoo:classic_whist,rollout=heuristic,rollouts=48,worlds=32,z=1"
    assert canonical_spec("pimc:inference=Zoo", "classic_whist") == on
    assert canonical_spec(on, "classic_whist") == on
    assert [p.name for p in loaded_files("pimc:inference=zoo", "classic_whist")] == ["classic_whist.pt"]
    assert canonical_spec("pimc:inference=checkpoint:Runs/a,b.pt,worlds=4", "classic_whist") == (
        "pimc:candidates=4,epsilon=0.1,exact=auto,inference=checkpoint:Runs/a,b.pt,rollout=heuristic,rollouts=48,worlds=4,z=1")


def test_random_inference_is_refused_and_reseed_restarts_the_inference_policy():
    with pytest.raises(ValueError, match="inference=random would weigh every world alike"):
        make_agent("pimc:inference=random", "classic_whist")

    class Recording:
        name = "recording"
        uses_observation_vector = False

        def __init__(self):
            self.seeds = []

        def act(self, observation, info):
            return 0

        def reseed(self, seed):
            self.seeds.append(seed)

    made = {}

    def factory(spec, game, seed):
        if spec == "recording":
            made["policy"] = Recording()
            return made["policy"]
        return make_agent(spec, game, seed=seed)

    agent = PIMCAgent("classic_whist", make_policy=factory, inference="recording", seed=1)
    agent.reseed(7)
    agent.reseed(7)
    assert len(made["policy"].seeds) == 2 and made["policy"].seeds[0] == made["policy"].seeds[1]
