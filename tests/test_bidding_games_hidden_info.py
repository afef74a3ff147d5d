"""Hypothesis tests: Romanian Whist and Bid Whist views ignore cards the viewer cannot see
(RULES.md §1.7, §5, §6).

For a random seed and a random observer seat, two fixed deals differ only in hidden cards the
observer cannot see: some cards swapped between two OTHER players' hands; in Romanian Whist
optionally a hand card swapped with an undealt card (not the turn-up); in Bid Whist optionally
kitty cards swapped with another player's hand cards. The same actions are then played in both
environments while they are legal in both, and at every step the observer's observation vector,
action mask, ``information_state``, infos, reward and ANSI render (``env.viewer = observer``) must
be identical. With a swapped kitty, the comparison stops once the observer may see the kitty
(the observer declares, or ``sport_kitty`` shows it to all).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whist_env import bid_whist_v0, romanian_whist_v0
from whist_env.rules.bid_whist import AUCTION

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEEDS = st.integers(0, 2**31 - 1)
MAX_STEPS = 160


def suit_of_text(text: str) -> str | None:
    return None if text.startswith("JK") else text[-1]


def pick_swap(rng: np.random.Generator, give_p: list[str], give_q: list[str], n_swap: int, same_suit: bool):
    """Up to ``n_swap`` pairs (from_p[i], from_q[i]); same-suit pairs keep every void as it was."""
    if same_suit:
        from_p: list[str] = []
        from_q: list[str] = []
        for c in [give_p[i] for i in rng.permutation(len(give_p))]:
            match = [d for d in give_q if suit_of_text(d) == suit_of_text(c) and d not in from_q]
            if match and len(from_p) < n_swap:
                from_p.append(c)
                from_q.append(match[int(rng.integers(len(match)))])
        if from_p:
            return from_p, from_q
    k = min(n_swap, len(give_p), len(give_q))
    from_p = [give_p[i] for i in rng.choice(len(give_p), k, replace=False)]
    from_q = [give_q[i] for i in rng.choice(len(give_q), k, replace=False)]
    return from_p, from_q


def exchange(cards: list[str], out: list[str], into: list[str]) -> list[str]:
    return [c for c in cards if c not in out] + list(into)


def view_of(env, agent: str):
    env.viewer = agent
    obs = env.observe(agent)
    return (
        obs["observation"].tobytes(),
        obs["action_mask"].tobytes(),
        repr(dict(env.information_state(agent))),
        repr(env.infos[agent]),
        env.rewards[agent],
        env.terminations[agent],
        env.truncations[agent],
        env.agent_selection,
        env.render(),
    )


def assert_same_view(env_a, env_b, agent: str, step: int, trace: list[str]) -> None:
    va, vb = view_of(env_a, agent), view_of(env_b, agent)
    names = (
        "observation",
        "action_mask",
        "information_state",
        "infos",
        "reward",
        "termination",
        "truncation",
        "agent_selection",
        "render",
    )
    for name, a, b in zip(names, va, vb):
        if name == "observation" and a != b:
            lay = env_a.observation_layout()
            oa, ob = np.frombuffer(a, dtype=np.float32), np.frombuffer(b, dtype=np.float32)
            blocks = [k for k, sl in lay.items() if not np.array_equal(oa[sl], ob[sl])]
            raise AssertionError(f"{agent}'s observation differs at step {step} in {blocks}; actions {trace}")
        assert a == b, f"{agent}'s {name} differs at step {step}; actions {trace}\nA: {a}\nB: {b}"


def play_both(module, options: dict, deal_a: dict, deal_b: dict, observer: int, rng, *, owner: int, hidden_until=None) -> int:
    """Play the same actions in two environments while legal in both; compare the observer's views.

    ``owner`` holds different cards in the two deals (its own view must differ at the start).
    ``hidden_until(env)``: True once the difference may legitimately be seen by the observer.
    Returns the number of steps played in both.
    """
    env_a = module.raw_env(render_mode="ansi", **options)
    env_b = module.raw_env(render_mode="ansi", **options)
    env_a.reset(seed=0, options=deal_a)
    env_b.reset(seed=0, options=deal_b)
    me = env_a.possible_agents[observer]
    assert view_of(env_a, env_a.possible_agents[owner])[0] != view_of(env_b, env_a.possible_agents[owner])[0]
    trace: list[str] = []
    assert_same_view(env_a, env_b, me, 0, trace)
    steps = 0
    for steps in range(1, MAX_STEPS + 1):
        if env_a.terminations[me] or env_a.truncations[me]:
            break
        agent = env_a.agent_selection
        both = np.flatnonzero(env_a.observe(agent)["action_mask"] & env_b.observe(agent)["action_mask"])
        if len(both) == 0:
            break  # the deals diverge: the same public history cannot go on
        action = int(both[int(rng.integers(len(both)))])
        trace.append(env_a.action_label(action))
        env_a.step(action)
        env_b.step(action)
        if hidden_until is not None and hidden_until(env_a):
            break
        assert_same_view(env_a, env_b, me, steps, trace)
    return steps


# ------------------------------------------------------------------ Romanian Whist
ROMANIAN_OPTIONS = st.fixed_dictionaries(
    {
        "num_players": st.sampled_from([3, 6]),
        "schedule": st.sampled_from(["1-8-1", "8-1-8"]),
        "trump_on_one_card_deals": st.booleans(),
        "episode": st.sampled_from(["game", "hand"]),
    }
)


@SETTINGS
@given(
    options=ROMANIAN_OPTIONS,
    seed=SEEDS,
    pick=st.integers(0, 10**6),
    deal_pick=st.integers(0, 10**6),
    n_swap=st.integers(1, 4),
    same_suit=st.booleans(),
    undealt=st.booleans(),
)
def test_romanian_observation_ignores_other_hidden_cards(options, seed, pick, deal_pick, n_swap, same_suit, undealt):
    rng = np.random.default_rng(seed)
    base = romanian_whist_v0.raw_env(**options)
    if options["episode"] == "hand":
        base.reset(seed=seed)  # the deal size is drawn from the schedule
    else:
        base.reset(seed=seed, options={"deal_index": deal_pick % len(base.game.schedule)})
    deal_a = base.current_deal()
    n = options["num_players"]
    agents = base.possible_agents
    observer = pick % n
    others = [s for s in range(n) if s != observer]
    p = others[(pick // n) % len(others)]
    rest = [s for s in others if s != p]
    q = rest[(pick // (n * n)) % len(rest)]
    hands = {a: list(h) for a, h in deal_a["hands"].items()}
    dealt = {c for h in hands.values() for c in h}
    pool = [t for t in map(base.action_label, base.game.deck()) if t not in dealt and t != deal_a.get("turn_up")]
    if undealt and pool:
        from_p, from_pool = pick_swap(rng, hands[agents[p]], pool, n_swap, same_suit)
        hands[agents[p]] = exchange(hands[agents[p]], from_p, from_pool)
    else:
        from_p, from_q = pick_swap(rng, hands[agents[p]], hands[agents[q]], n_swap, same_suit)
        hands[agents[p]] = exchange(hands[agents[p]], from_p, from_q)
        hands[agents[q]] = exchange(hands[agents[q]], from_q, from_p)
    deal_b = {**deal_a, "hands": hands}
    assert set(deal_a) >= {"hands", "dealer", "deal_index"}
    play_both(romanian_whist_v0, options, deal_a, deal_b, observer, rng, owner=p)


# ------------------------------------------------------------------ Bid Whist
BID_OPTIONS = st.sampled_from(
    [
        {},
        {"kitty": False},
        {"deuces_wild": True, "jokers_high": True},
        {"sport_kitty": True},
        {"kitty": False, "deuces_wild": True},
    ]
)


@SETTINGS
@given(
    options=BID_OPTIONS,
    seed=SEEDS,
    pick=st.integers(0, 10**6),
    n_swap=st.integers(1, 6),
    same_suit=st.booleans(),
    with_kitty=st.booleans(),
)
def test_bid_whist_observation_ignores_other_hidden_cards(options, seed, pick, n_swap, same_suit, with_kitty):
    rng = np.random.default_rng(seed)
    base = bid_whist_v0.raw_env(**options)
    base.reset(seed=seed)
    deal_a = base.current_deal()
    agents = base.possible_agents
    observer = pick % 4
    others = [s for s in range(4) if s != observer]
    p = others[(pick // 4) % 3]
    q = [s for s in others if s != p][(pick // 12) % 2]
    hands = {a: list(h) for a, h in deal_a["hands"].items()}
    deal_b = {**deal_a, "hands": hands}
    kitty_swapped = with_kitty and base.game.options.kitty
    if kitty_swapped:
        # kitty cards for p's cards: unseen by the observer until the auction ends with the
        # observer as declarer, or with the kitty sported to all
        from_p, from_kitty = pick_swap(rng, hands[agents[p]], list(deal_a["kitty"]), n_swap, same_suit)
        hands[agents[p]] = exchange(hands[agents[p]], from_p, from_kitty)
        deal_b["kitty"] = exchange(list(deal_a["kitty"]), from_kitty, from_p)
    else:
        from_p, from_q = pick_swap(rng, hands[agents[p]], hands[agents[q]], n_swap, same_suit)
        hands[agents[p]] = exchange(hands[agents[p]], from_p, from_q)
        hands[agents[q]] = exchange(hands[agents[q]], from_q, from_p)

    def kitty_seen(env) -> bool:
        g = env.game
        if not kitty_swapped or g.phase == AUCTION or g.declarer is None:
            return False
        return g.declarer == observer or g.options.sport_kitty

    play_both(bid_whist_v0, options, deal_a, deal_b, observer, rng, owner=p, hidden_until=kitty_seen)
