"""The rule option ``observation="history"``: the hand's actions in order in the observation
(``history`` and ``history_mask`` of whist_env/envs/encoding.py), checked at every step of random
games of every game against a log the test keeps itself while it steps them."""

from __future__ import annotations

import numpy as np
import pytest

import whist_env

CASES = [(g, {}) for g in sorted(whist_env.GAMES)] + [
    ("romanian_whist", {"num_players": 3}),
    ("romanian_whist", {"num_players": 6, "schedule": "8-1-8"}),
    ("bid_whist", {"kitty": False}),
    ("cutthroat_whist", {"deck": "52"}),
    ("classic_whist", {"allow_revoke": True}),
]


def expected_rows(log: list[tuple[int, int, bool, bool, int, int]], observer: int, n: int, hidden: int) -> np.ndarray:
    """The ``history`` rows of ``observer`` from the test's log of the hand: per action
    ``(seat, action, hidden phase, card play, trick number, cards in the trick)`` as the rules
    stood when it was taken."""
    rows = []
    for seat, action, face_down, play, trick, position in log:
        shown = hidden if face_down and seat != observer else action
        rows.append(((seat - observer) % n, shown, trick if play else -1, position if play else -1))
    return np.array(rows, dtype=np.float32).reshape(-1, 4)


@pytest.mark.parametrize(("game", "options"), CASES, ids=[f"{g}-{o}" for g, o in CASES])
def test_history_rows_follow_the_hand(game, options):
    env = whist_env.GAMES[game].raw_env(observation="history", episode="game", max_hands=3, **options)
    rng = np.random.default_rng(7)
    env.reset(seed=11)
    g = env.game
    lay = env.observation_layout()
    length = g.max_hand_actions()
    assert lay["history"].stop - lay["history"].start == 4 * length and lay["history_mask"].stop == env.observation_space("player_0")["observation"].shape[0]
    log: list[tuple[int, int, bool, bool, int, int]] = []
    hand, longest, steps = g.hand_number, 0, 0
    while not (any(env.terminations.values()) or any(env.truncations.values())):
        if g.hand_number != hand:
            hand, log = g.hand_number, []
        for agent in env.agents:
            seat = env.possible_agents.index(agent)
            obs = env.observe(agent)["observation"]
            assert env.observation_space(agent)["observation"].contains(obs)
            rows = obs[lay["history"]].reshape(length, 4)
            mask = obs[lay["history_mask"]]
            assert mask.tolist() == [1.0] * len(log) + [0.0] * (length - len(log))
            assert np.array_equal(rows[: len(log)], expected_rows(log, seat, g.num_players, g.num_actions))
            assert not rows[len(log) :].any()
        agent = env.agent_selection
        legal = np.flatnonzero(env.observe(agent)["action_mask"])
        action = int(rng.choice(legal))
        log.append((g.current_player, action, g.phase in g.HIDDEN_ACTION_PHASES, g.phase in g.CARD_PLAY_PHASES,
                    g.trick_number, len(g.trick)))
        longest = max(longest, len(log))
        env.step(action)
        steps += 1
    assert longest <= length and steps > 0


@pytest.mark.parametrize("game", sorted(set(whist_env.GAMES) - {"romanian_whist"}))
def test_a_whole_hand_fills_the_history(game):
    """Every game but Romanian Whist (most of whose deals are shorter than its longest) plays
    exactly ``max_hand_actions()`` actions in a hand that reaches its end."""
    env = whist_env.GAMES[game].raw_env(observation="history", episode="hand")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    count = 0
    while not any(env.terminations.values()):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
        count += 1
    assert count == env.game.max_hand_actions()


def test_the_default_observation_has_no_history_and_keeps_its_size():
    plain = whist_env.classic_whist_v0.raw_env()
    rich = whist_env.classic_whist_v0.raw_env(observation="history")
    assert "history" not in plain.observation_layout()
    assert plain.observation_space("player_0")["observation"].shape == (624,)
    assert rich.observation_space("player_0")["observation"].shape == (624 + 5 * 52,)
    assert {k: v for k, v in rich.observation_layout().items() if k not in ("history", "history_mask")} == plain.observation_layout()


def test_history_needs_a_known_value():
    with pytest.raises(ValueError, match="observation"):
        whist_env.classic_whist_v0.raw_env(observation="sequence")
    pytest.importorskip("torch")
    from whist_env import vector

    with pytest.raises(ValueError, match="observation"):
        vector.make("classic_whist", 2, observation="sequence")


def test_a_world_keeps_the_observers_history():
    env = whist_env.bid_whist_v0.raw_env(observation="history", episode="hand")
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(20):  # through the auction, the discards and into the play
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    for agent in env.possible_agents:
        world = env.resample_from_infostate(agent, rng)
        assert np.array_equal(world.observe(agent)["observation"], env.observe(agent)["observation"])
