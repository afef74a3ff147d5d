"""Rule-based agents of Minnesota, German and Cutthroat Whist: legal play and club-player decisions."""

from __future__ import annotations

import random

import pytest

from agents.heuristics.card_play import CardView, play_against_tricks
from agents.heuristics.cutthroat import CutthroatHeuristicAgent, inferred_jokers_high
from agents.heuristics.german import GermanHeuristicAgent, card_value
from agents.heuristics.minnesota import MinnesotaHeuristicAgent, hand_strength
from agents.random_agent import RandomAgent
from whist_env import cutthroat_whist_v0, german_whist_v0, minnesota_whist_v0
from whist_env.engine.cards import card_from_str, card_to_str, suit_of
from whist_env.engine.tricks import natural_context


# ------------------------------------------------------------------------------ helpers
def play_hands(module, make_policies, num_hands: int, seed: int, **options) -> int:
    """Play ``num_hands`` hands on the raw env; every action must be in the mask. Returns decisions."""
    env = module.raw_env(episode="hand", **options)
    decisions = 0
    for i in range(num_hands):
        policies = make_policies(i)
        env.reset(seed=seed + i)
        while not (env.game.done or env.game.truncated):
            agent = env.agent_selection
            obs = env.observe(agent)
            action = policies[int(agent.split("_")[1])].act(obs, env.information_state(agent))
            assert isinstance(action, int)
            assert obs["action_mask"][action] == 1, (agent, env.action_label(action), env.game.phase)
            env.step(action)
            decisions += 1
    return decisions


def act(env, agent: object) -> str:
    """The label of the action ``agent`` chooses for the env's agent to act."""
    name = env.agent_selection
    return env.action_label(agent.act(env.observe(name), env.information_state(name)))


def step(env, *labels: str) -> None:
    for label in labels:
        env.step(env.action_id(label))


def mixed(heuristic, n_seats: int, rotate: int = 2):
    """Seat policies: the heuristic in every seat for even deals, mixed with random ones otherwise."""

    def make(i: int):
        if i % rotate == 0:
            return [heuristic] * n_seats
        return [heuristic if (s + i) % 2 == 0 else RandomAgent(seed=100 * i + s) for s in range(n_seats)]

    return make


# ------------------------------------------------------------------------------ legal play
@pytest.mark.parametrize(
    ("options", "hands"),
    [({}, 12), ({"doubling_variation": True, "grand_leader": "right"}, 12), ({"allow_revoke": True}, 3)],
    ids=["default", "doubling-right", "revoke"],
)
def test_minnesota_heuristic_plays_only_legal_actions(options, hands):
    # with allow_revoke a random player's revoke annuls the hand and another is dealt
    assert play_hands(minnesota_whist_v0, mixed(MinnesotaHeuristicAgent(), 4), hands, seed=7, **options) > 0


@pytest.mark.parametrize("options", [{}, {"first_leader": "non_dealer", "scoring": "over_six"}], ids=["default", "non-dealer"])
def test_german_heuristic_plays_only_legal_actions(options):
    assert play_hands(german_whist_v0, mixed(GermanHeuristicAgent(solve_from=8), 2), 10, seed=3, **options) > 0


def test_german_heuristic_exact_phase_two_is_legal():
    assert play_hands(german_whist_v0, mixed(GermanHeuristicAgent(), 2), 3, seed=11) > 0


@pytest.mark.parametrize(
    "options",
    [{}, {"jokers_high": True}, {"jokers_high": True, "big_joker": "black"}, {"deck": "52"}],
    ids=["default", "jokers-high", "big-black", "deck52"],
)
def test_cutthroat_heuristic_plays_only_legal_actions(options):
    assert play_hands(cutthroat_whist_v0, mixed(CutthroatHeuristicAgent(), 3), 12, seed=5, **options) > 0


def test_agents_have_policy_shape():
    for agent in (MinnesotaHeuristicAgent(), GermanHeuristicAgent(), CutthroatHeuristicAgent()):
        assert agent.name == "heuristic"
        with pytest.raises(ValueError):
            agent.act({"action_mask": [1] + [0] * 53}, None)


# ------------------------------------------------------------------------------ Minnesota
STRONG = ["AS", "KS", "QS", "4S", "AH", "KH", "3H", "AD", "5D", "2D", "AC", "9C", "3C"]
WEAK = ["2S", "5S", "7S", "3H", "6H", "8H", "JH", "2D", "4D", "9D", "3C", "6C", "TC"]


def minnesota_hands(seat0: list[str]) -> dict[str, list[str]]:
    rest = [card_to_str(c) for c in range(52) if card_to_str(c) not in seat0]
    return {"player_0": seat0, "player_1": rest[:13], "player_2": rest[13:26], "player_3": rest[26:]}


def test_minnesota_strong_hand_gives_its_lowest_black_card():
    assert hand_strength([card_from_str(c) for c in STRONG]) >= 11
    env = minnesota_whist_v0.raw_env()
    env.reset(seed=0, options={"hands": minnesota_hands(STRONG), "dealer": "player_3"})
    assert env.agent_selection == "player_0" and env.game.phase == "bid_card"
    assert act(env, MinnesotaHeuristicAgent()) == "3C"


def test_minnesota_weak_hand_gives_its_lowest_red_card():
    assert hand_strength([card_from_str(c) for c in WEAK]) < 11
    env = minnesota_whist_v0.raw_env()
    env.reset(seed=0, options={"hands": minnesota_hands(WEAK), "dealer": "player_3"})
    assert act(env, MinnesotaHeuristicAgent()) == "2D"


def _minnesota_play(bids: list[str], hands: dict[str, list[str]]):
    """Env after the four bid cards (dealer player_3, so player_0 chooses first)."""
    env = minnesota_whist_v0.raw_env()
    env.reset(seed=0, options={"hands": hands, "dealer": "player_3"})
    step(env, *bids)
    assert env.game.phase == "play"
    return env


LOW_HANDS = {
    "player_0": ["2C", "5C", "9C", "KC", "3D", "7D", "JD", "4H", "8H", "QH", "5S", "9S", "KS"],
    "player_1": ["3C", "6C", "TC", "AC", "4D", "8D", "QD", "5H", "9H", "KH", "6S", "TS", "AS"],
    "player_2": ["4C", "7C", "JC", "2D", "5D", "9D", "KD", "6H", "TH", "AH", "2S", "7S", "JS"],
    "player_3": ["8C", "QC", "6D", "TD", "AD", "2H", "3H", "7H", "JH", "3S", "4S", "8S", "QS"],
}


def test_minnesota_low_hand_ducks_with_the_highest_losing_card():
    env = _minnesota_play(["3D", "4D", "2D", "6D"], LOW_HANDS)  # all red: Low, player_0 leads
    assert env.information_state("player_1")["contract"] == "low"
    step(env, "KC")  # player_1 holds 3C 6C TC AC: the highest club under the king is the ten
    assert act(env, MinnesotaHeuristicAgent()) == "TC"


def test_minnesota_low_hand_forced_to_win_last_unloads_its_highest_card():
    env = _minnesota_play(["3D", "4D", "2D", "6D"], LOW_HANDS)
    step(env, "2C")
    assert act(env, MinnesotaHeuristicAgent()) == "3C"  # player_1: must overtake the two, as low as it can
    step(env, "3C")
    assert act(env, MinnesotaHeuristicAgent()) == "4C"  # player_2 must overtake: the card most likely beaten
    step(env, "4C")
    assert act(env, MinnesotaHeuristicAgent()) == "QC"  # player_3, last, must win: with its highest club


def test_minnesota_low_hand_throws_its_most_dangerous_card_when_void():
    info = {"seat": 1, "hand": ("AH", "2H", "KS", "3D"), "trick": ((0, "5C"),), "events": (("play", 0, "5C"),)}
    view = CardView(info, natural_context(None), 4, partner=3)
    legal = [card_from_str(c) for c in info["hand"]]
    assert card_to_str(play_against_tricks(view, legal)) == "AH"


def test_minnesota_high_hand_second_hand_low_third_hand_high_fourth_wins_cheaply():
    env = _minnesota_play(["2C", "4D", "2D", "6D"], LOW_HANDS)  # player_0 black: High, team 0 Grand
    assert env.information_state("player_2")["contract"] == "high"
    assert env.agent_selection == "player_1"  # the Grand player's left leads
    step(env, "6S")
    assert act(env, MinnesotaHeuristicAgent()) == "2S"  # player_2: second hand low (2S 7S JS)
    step(env, "7S")
    assert act(env, MinnesotaHeuristicAgent()) == "QS"  # player_3: third hand high (3S 4S 8S QS)
    step(env, "QS")
    assert act(env, MinnesotaHeuristicAgent()) == "KS"  # player_0, last: the cheapest winner


def test_minnesota_high_hand_does_not_overtake_a_partner_holding_the_trick():
    env = _minnesota_play(["2C", "4D", "2D", "6D"], LOW_HANDS)
    step(env, "5H", "TH", "7H")  # player_2 (partner of player_0) wins so far with TH
    assert act(env, MinnesotaHeuristicAgent()) == "4H"  # player_0, last, holds 4H 8H QH


# ------------------------------------------------------------------------------ German
GERMAN_HANDS = {
    "player_0": ["3H", "9H", "2C", "5C", "8C", "JC", "4D", "7D", "TD", "KD", "3S", "6S", "9S"],
    "player_1": ["4H", "KH", "AH", "3C", "6C", "9C", "QC", "2D", "5D", "8D", "JD", "4S", "7S"],
}
# AS is turned up (spades trump); after trick 1 the 2H is the next face-up card (d[28]).
GERMAN_STOCK = ["AS", "6H", "2H", "7H", "8H", "TH", "JH", "QH", "5H", "4C", "7C", "TC", "KC", "AC",
                "3D", "6D", "9D", "QD", "AD", "2S", "5S", "8S", "TS", "JS", "QS", "KS"]  # fmt: skip


def german_env(hands=GERMAN_HANDS, stock=GERMAN_STOCK):
    env = german_whist_v0.raw_env()
    env.reset(seed=0, options={"hands": hands, "dealer": "player_0", "stock": stock})
    return env


def test_german_wins_a_face_up_trump_ace_cheaply():
    env = german_env()
    assert env.information_state("player_1")["stock_top"] == "AS"
    step(env, "3H")  # player_0 (dealer) leads 3H
    assert act(env, GermanHeuristicAgent()) == "4H"  # the lowest heart that wins, not KH / AH


GERMAN_VOID_HANDS = {
    "player_0": ["3H", "9H", "2C", "5C", "8C", "JC", "3C", "6C", "9C", "QC", "3S", "6S", "9S"],  # no diamonds
    "player_1": ["4H", "KH", "AH", "2D", "4D", "5D", "7D", "8D", "TD", "JD", "KD", "4S", "7S"],
}


def german_void_env(face_up_after_trick_one: str):
    """player_1 wins trick 1 (3H, 4H) and takes AS; player_0 draws 5H; then it leads 2D, to which
    player_0 (void in diamonds, holding small trumps) must answer."""
    used = set(GERMAN_VOID_HANDS["player_0"] + GERMAN_VOID_HANDS["player_1"])
    first = ["AS", "5H", face_up_after_trick_one]
    rest = [card_to_str(c) for c in range(52) if card_to_str(c) not in used and card_to_str(c) not in first]
    env = german_env(GERMAN_VOID_HANDS, first + rest)
    step(env, "3H", "4H")
    assert env.information_state("player_0")["stock_top"] == face_up_after_trick_one
    step(env, "2D")
    return env


def test_german_ruffs_with_the_lowest_trump_for_a_good_face_up_card():
    env = german_void_env("KS")
    assert act(env, GermanHeuristicAgent()) == "3S"


def test_german_throws_a_low_plain_card_to_a_poor_face_up_card():
    env = german_void_env("2H")
    card = card_from_str(act(env, GermanHeuristicAgent()))
    assert suit_of(card) != 3 and card_value(card, 3) <= 0.03  # not a ruff: a small plain card


def test_german_leads_a_small_card_when_the_face_up_card_is_poor():
    env = german_env()
    step(env, "3H", "4H")  # player_1 wins the AS; 2H is turned up; player_1 leads
    assert env.information_state("player_1")["stock_top"] == "2H"
    card = card_from_str(act(env, GermanHeuristicAgent()))
    assert card_value(card, 3) <= 0.03  # a small plain card, never a trump or an honour


def _brute_force(a: int, b: int, trump: int) -> int:
    """Leader's tricks with best play by both, by plain minimax (reference for the solver)."""
    if not a:
        return 0
    n = a.bit_count()
    best = 0
    for c in [x for x in range(52) if a >> x & 1]:
        follow = [x for x in range(52) if b >> x & 1 and x // 13 == c // 13] or [x for x in range(52) if b >> x & 1]
        worst = n
        for d in follow:
            a2, b2 = a & ~(1 << c), b & ~(1 << d)
            wins = (d < c) if d // 13 == c // 13 else d // 13 != trump
            v = 1 + _brute_force(a2, b2, trump) if wins else (n - 1) - _brute_force(b2, a2, trump)
            worst = min(worst, v)
        best = max(best, worst)
    return best


def test_german_phase_two_count_matches_brute_force():
    rng = random.Random(1)
    for _ in range(30):
        cards = rng.sample(range(52), 10)
        a, b = sum(1 << c for c in cards[:5]), sum(1 << c for c in cards[5:])
        trump = rng.randrange(4)
        assert GermanHeuristicAgent._solve(a, b, trump) == _brute_force(a, b, trump)


def test_german_phase_two_count_matches_brute_force_without_trump_and_after_the_memo_fills():
    rng = random.Random(2)
    for _ in range(40):
        n = rng.randint(1, 5)
        cards = rng.sample(range(52), 2 * n)
        a, b = sum(1 << c for c in cards[:n]), sum(1 << c for c in cards[n:])
        trump = rng.choice([None, 0, 3])
        assert GermanHeuristicAgent._solve(a, b, trump) == _brute_force(a, b, -1 if trump is None else trump)


def _brute_force_card(mine: int, opp: int, led: int | None, c: int, trump: int) -> int:
    """Tricks the player holding ``mine`` takes by playing ``c`` (to the opponent's ``led`` card,
    or as a lead when ``led`` is None), both sides playing best from then on (plain minimax)."""
    n = mine.bit_count()
    rest = mine & ~(1 << c)
    if led is not None:
        led_wins = (c < led) if c // 13 == led // 13 else c // 13 != trump
        return (n - 1) - _brute_force(opp, rest, trump) if led_wins else 1 + _brute_force(rest, opp, trump)
    follow = [d for d in range(52) if opp >> d & 1 and d // 13 == c // 13] or [d for d in range(52) if opp >> d & 1]
    worst = n
    for d in follow:
        b2 = opp & ~(1 << d)
        wins = (d < c) if d // 13 == c // 13 else d // 13 != trump
        worst = min(worst, 1 + _brute_force(rest, b2, trump) if wins else (n - 1) - _brute_force(b2, rest, trump))
    return worst


@pytest.mark.parametrize("seed", [4, 9])
def test_german_phase_two_choice_takes_the_most_tricks(seed):
    """Every phase-2 card of the last five tricks reaches the brute-force best count."""
    env = german_whist_v0.raw_env(episode="hand")
    env.reset(seed=seed)
    agent = GermanHeuristicAgent()
    while env.game.phase == "stock" or env.game.hands[env.game.current_player].bit_count() > 5:
        step(env, act(env, agent))
    g = env.game
    while not g.done:
        me = g.current_player
        trump = -1 if g.trump is None else g.trump
        led = g.trick[0][1] if g.trick else None
        values = {c: _brute_force_card(g.hands[me], g.hands[1 - me], led, c, trump) for c in g.legal_action_list()}
        chosen = card_from_str(act(env, agent))
        assert values[chosen] == max(values.values())
        env.step(chosen)


def test_german_phase_two_knows_the_opponent_hand_and_plays_the_exact_count():
    env = german_whist_v0.raw_env(episode="hand")
    env.reset(seed=4)
    agent = GermanHeuristicAgent()
    while env.game.phase == "stock" or len(env.game.trick) or env.game.hands[0].bit_count() > 11:
        step(env, act(env, agent))
    g = env.game
    leader = g.current_player
    info = env.information_state(env.agent_selection)
    view = CardView(info, natural_context("CDHS".index(info["trump"])), 2)
    assert view.unseen == g.hands[1 - leader]  # the stock is empty: the opponent's hand is known
    expected = GermanHeuristicAgent._solve(g.hands[leader], g.hands[1 - leader], g.trump)
    before = g.tricks_won[leader]
    while not g.done:
        step(env, act(env, agent))
    assert g.tricks_won[leader] - before == expected  # both sides count the ending out exactly


# ------------------------------------------------------------------------------ Cutthroat
def cutthroat_env(hands: dict[str, list[str]], **options):
    env = cutthroat_whist_v0.raw_env(**options)
    env.reset(seed=0, options={"hands": hands, "dealer": "player_2"})  # player_0 leads
    return env


CUT_HANDS = {
    "player_0": ["2C", "5C", "8C", "JC", "AC", "3D", "6D", "9D", "QD", "4H", "7H", "TH", "KH", "2S", "5S", "8S", "JS", "AS"],
    "player_1": ["3C", "6C", "9C", "QC", "JKR", "4D", "7D", "TD", "KD", "5H", "8H", "JH", "AH", "3S", "6S", "9S", "QS", "JKB"],
    "player_2": ["4C", "7C", "TC", "KC", "2D", "5D", "8D", "JD", "AD", "2H", "3H", "6H", "9H", "QH", "4S", "7S", "TS", "KS"],
}


def test_cutthroat_ducks_when_it_cannot_win():
    env = cutthroat_env(CUT_HANDS)
    step(env, "AC")  # player_0 leads the ace of clubs; player_1 holds 3C 6C 9C QC
    assert act(env, CutthroatHeuristicAgent()) == "3C"


def test_cutthroat_wins_with_the_cheapest_winning_card_when_last():
    env = cutthroat_env(CUT_HANDS)
    step(env, "8C", "9C")  # player_2, last, holds 4C 7C TC KC: TC is the cheapest winner
    assert act(env, CutthroatHeuristicAgent()) == "TC"


def test_cutthroat_takes_a_sure_trick_second_hand():
    env = cutthroat_env(CUT_HANDS)
    step(env, "4H")  # player_1 holds 5H 8H JH AH: the ace is a master
    assert act(env, CutthroatHeuristicAgent()) == "AH"


def test_cutthroat_second_hand_ducks_without_a_likely_winner():
    env = cutthroat_env(CUT_HANDS)
    step(env, "2S")  # player_1 holds 3S 6S 9S QS; KS and AS are out
    assert act(env, CutthroatHeuristicAgent()) == "3S"


# player_1's hearts swapped for player_2's clubs: player_1 is void in hearts and holds both jokers
VOID_HEARTS_HANDS = {
    "player_0": CUT_HANDS["player_0"],
    "player_1": ["3C", "6C", "9C", "QC", "JKR", "4D", "7D", "TD", "KD", "4C", "7C", "TC", "KC", "3S", "6S", "9S", "QS", "JKB"],
    "player_2": ["5H", "8H", "JH", "AH", "2D", "5D", "8D", "JD", "AD", "2H", "3H", "6H", "9H", "QH", "4S", "7S", "TS", "KS"],
}


def test_cutthroat_dumps_a_powerless_joker_when_void():
    env = cutthroat_env(VOID_HEARTS_HANDS)
    step(env, "4H")
    assert act(env, CutthroatHeuristicAgent()) == "JKR"


def test_cutthroat_keeps_super_jokers_when_void():
    env = cutthroat_env(VOID_HEARTS_HANDS, jokers_high=True)
    step(env, "4H")
    assert act(env, CutthroatHeuristicAgent(jokers_high=True)) not in ("JKR", "JKB")


def test_cutthroat_infers_jokers_high_from_a_trick_a_joker_won():
    events = (("play", 0, "AC"), ("play", 1, "JKR"), ("play", 2, "4C"))
    assert inferred_jokers_high({"events": events}) is None
    assert inferred_jokers_high({"events": (*events, ("trick", 0, 1))}) is True
    assert inferred_jokers_high({"events": (*events, ("trick", 0, 0))}) is False
