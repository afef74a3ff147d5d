"""One soak game: a ``raw_env`` played with uniformly random legal actions to the end of its
episode, every hand held to its game's referee (the package docstring says what is checked)."""

from __future__ import annotations

import pickle
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from whist_env import GAMES
from whist_env.engine.cards import SUITS, card_from_str, card_to_str, mask_from_strs

from .grid import all_options
from .referee import HandLog, Referee, Violation, bits, block_mask, cards_text, suit_of
from .referees import REFEREES


class SoakGame:
    """One random legal game of ``game`` with ``options`` reset with ``seed``, checked as the
    package docstring says; :meth:`play` plays it.

    Attributes (after :meth:`play`): ``decisions``, ``hands`` played; ``failure``: ``None`` or
    the first broken invariant (a dict: check, detail, hand, decision, phase).
    """

    def __init__(self, game: str, seed: int, options: Mapping[str, Any], log: Callable[[str], None] | None = None) -> None:
        self.game, self.seed, self.options = game, seed, dict(options)
        self.log = log
        self.rng = np.random.default_rng([seed, 1])
        self.decisions = self.hands = 0
        self.failure: dict[str, Any] | None = None
        self.hand: HandLog | None = None
        self.phase = ""

    # ---------------------------------------------------------------- the game
    def play(self) -> SoakGame:
        """Play the game to its end; the first broken invariant (or exception) ends it, recorded in
        :attr:`failure`."""
        try:
            self._play()
        except Violation as v:
            self._fail(v.check, v.detail)
        except Exception as error:  # a crash is a failure of the soak too, with its traceback
            self._fail("exception", "".join(traceback.format_exception(error)[-6:]).strip())
        return self

    def _fail(self, check: str, detail: str) -> None:
        self.failure = {"check": check, "detail": detail, "hand": None if self.hand is None else self.hand.number,
                        "decision": self.decisions, "phase": self.phase}

    def _play(self) -> None:
        env = self.env = GAMES[self.game].raw_env(**self.options)
        env.reset(seed=self.seed)
        self.agents = list(env.possible_agents)
        self.n = len(self.agents)
        self.seat = {a: i for i, a in enumerate(self.agents)}
        self.ref = REFEREES.get(self.game, Referee)(all_options(self.game, self.options), self.n, env.action_label)
        hand_block = env.observation_layout()["hand"]
        self.width = hand_block.stop - hand_block.start  # C, the card ids of the game
        self.games_won = self.hand_in_game = self.annulled = 0
        self.last_dealer: int | None = None
        self.last_annulled = False
        limit = getattr(self.ref.o, "max_hands", 200) * 2000
        self.hand = self._open_hand()
        while True:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            if self.decisions > limit:
                raise Violation("runaway", f"{self.decisions} decisions and the episode has not ended (max_hands={self.ref.o.max_hands})")
            seat = self.seat[agent]
            self.phase = env.infos[agent]["phase"]
            observation = env.observe(agent)
            legal = np.flatnonzero(observation["action_mask"])
            if legal.size == 0:
                raise Violation("mask", f"{agent} is to act in phase {self.phase!r} with an empty action mask")
            hand = self.hand
            if self.phase in self.ref.CARD_PHASES and not hand.play_started:
                self._open_play(hand, agent, seat)
            action = int(legal[self.rng.integers(legal.size)])
            copies = self._check_views(hand, agent, seat, observation, legal) if len(hand.actions) == hand.check_at else None
            events = env.game.events  # this hand's public event log: the next deal starts a new list
            hand.actions.append((seat, self.phase, action))
            env.step(action)
            self.decisions += 1
            if copies is not None:
                self._compare_after_step(copies, action)
            info = env.infos[agent]
            if "last_hand" in info:
                self._close_hand(hand, events, info)
                self.hands += 1
                if not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
                    self.hand = self._open_hand()
            elif any(env.rewards.values()):
                raise Violation("rewards", f"rewards {env.rewards} on a step that ended no hand (§1.9)")
        self._check_episode_end()

    def _check_episode_end(self) -> None:
        """§1.9: every agent terminated (with ``winners``) or every agent truncated; truncated after
        exactly ``max_hands`` hands (never more played); ``episode="hand"`` ends with one scored hand."""
        env, o = self.env, self.ref.o
        ended, truncated = all(env.terminations.values()), all(env.truncations.values())
        if ended != ("winners" in env.infos[self.agents[0]]) or ended == truncated:
            raise Violation("episode end", f"terminations {env.terminations}, truncations {env.truncations}, "
                                           f"winners {env.infos[self.agents[0]].get('winners')}")
        dealt = self.hand.number + 1
        if dealt > o.max_hands or truncated != (dealt == o.max_hands and not ended):
            raise Violation("episode end", f"{'truncated' if truncated else 'ended'} after {dealt} hands, max_hands={o.max_hands} (§1.9)")
        if ended and o.episode == "hand" and self.ref.KNOWN and self.hands - self.annulled != 1:
            raise Violation("episode end", f"episode='hand' ended after {self.hands - self.annulled} scored hands (§1.9)")

    # ---------------------------------------------------------------- the deal
    def _state_blocks(self, names: Sequence[str]) -> tuple[np.ndarray, list[int], list[int]]:
        """``state()``, the hands by seat and the named card blocks, as bitmasks."""
        env = self.env
        state = env.state()
        layout = env.state_layout()
        rows = state[layout["hands"]].reshape(self.n, self.width)
        first = self.seat[env.agent_selection]
        hands = [0] * self.n
        for r in range(self.n):
            hands[(first + r) % self.n] = block_mask(rows[r])
        return state, hands, [block_mask(state[layout[name]]) for name in names]

    def _check_partition(self, what: str, named: Mapping[str, int]) -> None:
        """The card sets ``named`` are disjoint and together the deck (§1.3 and each game's deck)."""
        deck = self.ref.deck()
        union = 0
        for mask in named.values():
            union |= mask
        if union != deck or sum(bits(m) for m in named.values()) != bits(deck):
            sizes = {k: bits(m) for k, m in named.items()}
            seen_twice = sum(bits(m) for m in named.values()) - bits(union)
            raise Violation("cards", f"{what}: {sizes} do not partition the {bits(deck)}-card deck: missing "
                                     f"[{cards_text(deck & ~union)}], outside it [{cards_text(union & ~deck)}], {seen_twice} seen twice")

    def _open_hand(self) -> HandLog:
        """Read and check the new hand's deal: sizes, the partition of the deck (``state()``'s
        hands and hidden piles, ``current_deal()``), the dealer (§1.3, §2.9)."""
        env, ref = self.env, self.ref
        agent = env.agent_selection
        view = env.information_state(agent)
        deal = env.current_deal()
        dealer = self.seat[deal["dealer"]]
        dealt = [mask_from_strs(deal["hands"][a]) for a in self.agents]
        won = sum(view["games_won"])
        if won > self.games_won:
            self.games_won, self.hand_in_game = won, 0
        number = view["hand_number"]
        hand = HandLog(number, dealer, deal, dealt, list(view["scores"]), ref.deal_size(view, number), self.hand_in_game)
        self.hand = hand
        if ref.KNOWN and self.last_dealer is None:
            ref.check_first_dealer(hand, view)
        elif ref.KNOWN:
            due = self.last_dealer if self.last_annulled else ref.left(self.last_dealer)
            if dealer != due:
                raise Violation("dealer", f"hand {number} is dealt by seat {dealer}, due seat {due} (the deal passes left; "
                                          f"a revoke's redeal keeps the dealer, §2.9)")
        if ref.KNOWN:
            for seat, mask in enumerate(dealt):
                if bits(mask) != hand.k:
                    raise Violation("deal", f"seat {seat} is dealt {bits(mask)} cards, due {hand.k}")
            _, hands, piles = self._state_blocks(ref.PILES_AT_DEAL)
            if hands != dealt:
                raise Violation("state", f"state()'s hands {[cards_text(h) for h in hands]} are not the deal's {deal['hands']}")
            self._check_partition("the deal", {**{f"hand {s}": m for s, m in enumerate(dealt)}, **dict(zip(ref.PILES_AT_DEAL, piles))})
            for name, key in (("stock", "stock"), ("kitty_as_dealt", "kitty"), ("turn_up", "turn_up")):
                given = deal.get(key, ())
                if name in ref.PILES_AT_DEAL and mask_from_strs([given] if isinstance(given, str) else given) != piles[ref.PILES_AT_DEAL.index(name)]:
                    raise Violation("state", f"state()'s {name} [{cards_text(piles[ref.PILES_AT_DEAL.index(name)])}] is not the deal's {given}")
            ref.check_deal(hand)
        due = ref.pre_play_decisions(hand) + ref.tricks_played(hand) * self.n
        hand.check_at = int(self.rng.integers(due))
        return hand

    def _open_play(self, hand: HandLog, agent: str, seat: int) -> None:
        """Work out the hand's terms at its first card (the referee) and hold the env to them:
        the trump (``information_state``) and the first leader."""
        view = self.env.information_state(agent)
        self.ref.open_play(hand, view)
        hand.play_started = True
        if not self.ref.KNOWN:
            return
        trump = None if hand.trump is None else SUITS[hand.trump]
        if view["trump"] != trump:
            raise Violation("trump", f"trump {view['trump']!r}, due {trump!r} (deal {hand.deal})")
        if seat != hand.first_leader:
            raise Violation("leader", f"seat {seat} leads the first trick, due seat {hand.first_leader}")

    # ---------------------------------------------------------------- once a hand: views and copies
    def _check_views(self, hand: HandLog, agent: str, seat: int, observation: Mapping[str, np.ndarray], legal: np.ndarray) -> list:
        """At the hand's drawn decision: the mask against the legal set written here, every view of
        the env against the others, the deck's partition, and the copies (package docstring)."""
        env, ref = self.env, self.ref
        layout = env.observation_layout()
        size = observation["observation"].shape[0]
        for other in self.agents:
            if other != agent and env.observe(other)["action_mask"].any():
                raise Violation("mask", f"{other} has legal actions while {agent} is to act")
        state, hands, piles = self._state_blocks(ref.piles(self.phase))
        if not np.array_equal(state[:size], observation["observation"]):
            raise Violation("state", f"state() does not begin with the observation of {agent}, the agent to act")
        for other in self.agents:
            s = self.seat[other]
            own = block_mask(env.observe(other)["observation"][layout["hand"]])
            told = mask_from_strs(env.information_state(other)["hand"])
            if not own == told == hands[s]:
                raise Violation("state", f"{other}'s hand: observation [{cards_text(own)}], information_state [{cards_text(told)}], "
                                         f"state() [{cards_text(hands[s])}]")
        view = env.information_state(agent)
        held = [card_from_str(t) for t in view["hand"]]
        if ref.KNOWN:
            played = state[layout["played"]].reshape(self.n, self.width)
            self._check_partition(f"phase {self.phase!r}", {**{f"hand {s}": m for s, m in enumerate(hands)},
                                                             **{f"played by {agent}+{r}": block_mask(played[r]) for r in range(self.n)},
                                                             **dict(zip(ref.piles(self.phase), piles))})
            if self.phase in ref.CARD_PHASES:
                due = {card_to_str(c) for c in ref.legal_cards(held, [card_from_str(c) for _, c in view["trick"]], hand)}
            else:
                due = ref.phase_labels(hand, self.phase, seat, held)
            given = {env.action_label(int(a)) for a in legal}
            if due is not None and given != due:
                raise Violation("mask", f"{agent} in phase {self.phase!r} may take {sorted(given)}, due {sorted(due)} "
                                        f"(hand [{' '.join(view['hand'])}], trick {view['trick']})")
        copies = [("clone", env.clone()), ("pickle", pickle.loads(pickle.dumps(env)))]
        for name, copy in copies:
            self._compare(name, copy, "before a step")
        return copies

    def _compare(self, name: str, copy: Any, when: str) -> None:
        """``copy`` equals the env: agent to act, every agent's observation and information state,
        ``state()``, rewards, terminations, truncations and infos."""
        env = self.env
        if copy.agent_selection != env.agent_selection:
            raise Violation(name, f"{when}: agent to act {copy.agent_selection}, the env's {env.agent_selection}")
        for agent in self.agents:
            a, b = env.observe(agent), copy.observe(agent)
            if not (np.array_equal(a["observation"], b["observation"]) and np.array_equal(a["action_mask"], b["action_mask"])):
                raise Violation(name, f"{when}: the observation of {agent} differs from the env's")
            if dict(env.information_state(agent)) != dict(copy.information_state(agent)):
                raise Violation(name, f"{when}: the information state of {agent} differs from the env's")
        if not np.array_equal(env.state(), copy.state()):
            raise Violation(name, f"{when}: state() differs from the env's")
        for key in ("rewards", "terminations", "truncations", "infos"):
            if getattr(env, key) != getattr(copy, key):
                raise Violation(name, f"{when}: {key} {getattr(copy, key)} differ from the env's {getattr(env, key)}")

    def _compare_after_step(self, copies: list, action: int) -> None:
        for name, copy in copies:
            copy.step(action)
            self._compare(name, copy, f"after both took {self.env.action_label(action)}")

    # ---------------------------------------------------------------- the hand's end
    def _replay_tricks(self, hand: HandLog, events: Sequence[tuple]) -> tuple[list[int], int, list[tuple[int, int]]]:
        """Walk the hand's events: each trick one card per player clockwise from its leader (the
        first leader due, then the last winner), each card once and from its player's holdings,
        the winner §1.4's; German Whist's face-up stock card to the winner (§4.3). Returns the
        scored tricks per seat, the tricks played and every play ``(seat, card)``."""
        ref, n = self.ref, self.n
        tricks = [0] * n
        count, trick, plays = 0, [], []
        leader, used = hand.first_leader, 0
        for event in events:
            kind = event[0]
            if kind == "play":
                seat, card = event[1], event[2]
                if used >> card & 1 or not ref.holdings(hand, seat) >> card & 1:
                    raise Violation("cards", f"seat {seat} plays {card_to_str(card)}, played already or never held")
                used |= 1 << card
                trick.append((seat, card))
                plays.append((seat, card))
            elif kind == "trick":
                seats = [s for s, _ in trick]
                if event[1] != leader or seats != [(leader + i) % n for i in range(n)]:
                    raise Violation("trick", f"trick {count}: seats {seats} (leader {event[1]}), due {n} cards from seat {leader} clockwise")
                due = ref.trick_winner(trick, hand)
                if event[2] != due:
                    raise Violation("trick winner", f"trick {count} [{' '.join(card_to_str(c) for _, c in trick)}] led by seat {leader}: "
                                                    f"won by seat {event[2]}, due seat {due} (trump {hand.trump}, {hand.direction})")
                if count >= ref.unscored_tricks(hand):
                    tricks[due] += 1
                leader, trick, count = due, [], count + 1
            elif kind == "stock_take":
                top = card_from_str(hand.deal["stock"][2 * (count - 1)])
                if event[1] != leader or card_from_str(event[2]) != top:
                    raise Violation("stock", f"trick {count - 1}: seat {event[1]} takes {event[2]}; due the winner, seat {leader}, "
                                             f"takes {card_to_str(top)} (§4.3)")
        return tricks, count, plays

    def _revokes(self, hand: HandLog, plays: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """§2.9, replayed from the deal: ``(seat, led suit)`` of each play that did not follow while
        its player held the led suit, not yet proven by a later play of that suit (one that is
        would have ended the hand there)."""
        held, pending = list(hand.dealt), []
        for i, (seat, card) in enumerate(plays):
            if (seat, suit_of(card)) in pending:
                raise Violation("revoke", f"seat {seat}'s revoke in {SUITS[suit_of(card)]} is proven by {card_to_str(card)} "
                                          f"and the hand goes on (§2.9)")
            lead = plays[i - i % self.n][1]
            led = suit_of(lead)
            if i % self.n and suit_of(card) != led and any(held[seat] >> (led * 13 + r) & 1 for r in range(13)):
                pending.append((seat, led))
            held[seat] &= ~(1 << card)
        return pending

    def _close_hand(self, hand: HandLog, events: Sequence[tuple], info: Mapping[str, Any]) -> None:
        """The hand's tricks, points, score change and rewards against RULES.md (package docstring)."""
        ref = self.ref
        last = info["last_hand"]
        side_seat = {ref.side(s): s for s in reversed(range(self.n))}  # each side's first seat
        points = [last["hand_points"][self.agents[side_seat[side]]] for side in range(ref.num_sides)]
        after = [last["score"][self.agents[side_seat[side]]] for side in range(ref.num_sides)]
        for s, a in enumerate(self.agents):
            if last["hand_points"][a] != points[ref.side(s)] or last["score"][a] != after[ref.side(s)]:
                raise Violation("scores", f"partners show different points or scores: {last}")
        if last["hand_number"] != hand.number:
            raise Violation("hand", f"last_hand says hand {last['hand_number']}, the soak is in hand {hand.number}")
        revoker = self.seat[info["revoke"]] if "revoke" in info else None
        if self.log is not None:
            self.log(f"hand {hand.number}: dealer {hand.dealer}, tricks {list(last['tricks_won'].values())}, points {points}, "
                     f"scores {after}" + (f", annulled by seat {revoker}'s revoke" if revoker is not None else ""))
        if not ref.KNOWN:
            return
        tricks, count, plays = self._replay_tricks(hand, events)
        if ref.REVOKES:
            pending = self._revokes(hand, plays)
            if revoker is not None:
                seat, _, card = hand.actions[-1]
                if seat != revoker or (seat, suit_of(card)) not in pending:
                    raise Violation("revoke", f"seat {revoker}'s revoke annuls the hand at seat {seat}'s {card_to_str(card)}; "
                                              f"revokes pending {pending} (§2.9)")
            elif pending:
                raise Violation("revoke", f"revokes {pending} were never proven, yet every card was played (§2.9)")
        if revoker is not None:
            side = ref.side(revoker)
            due = [0] * ref.num_sides
            due[side] = ref.revoke_penalty(hand.start_scores[side]) - hand.start_scores[side]
        else:
            told = [last["tricks_won"][a] for a in self.agents]
            if count != ref.tricks_played(hand) or sum(told) != hand.k or told != tricks:
                raise Violation("tricks", f"{count} tricks played (due {ref.tricks_played(hand)}); tricks won {told} sum to "
                                          f"{sum(told)} (due {hand.k}); the events count {tricks}")
            due = ref.hand_points(hand, tricks)
        change = [a - b for a, b in zip(after, hand.start_scores)]
        if due is not None and not points == change == due:
            raise Violation("hand points", f"hand points {points}, score change {change} ({hand.start_scores} -> {after}); "
                                           f"due {due} from tricks {tricks} (contract {hand.contract}, grand {hand.grand}, trump {hand.trump})")
        self._check_rewards(change)
        self.last_dealer, self.last_annulled = hand.dealer, revoker is not None
        if revoker is None:
            self.hand_in_game += 1
        else:
            self.annulled += 1

    def _check_rewards(self, points: Sequence[int]) -> None:
        """§1.9: on the step that ends a hand, ``score``: own side's points; ``score_diff``: minus
        the other side's (partnerships) or the mean of the others' (each for self); ``win_loss``:
        ±1 to winners and losers once the game ends, else 0."""
        env, ref = self.env, self.ref
        mode = ref.o.reward
        winners = env.infos[self.agents[0]].get("winners")
        for seat, agent in enumerate(self.agents):
            own = points[ref.side(seat)]
            if mode == "score":
                due = own
            elif mode == "score_diff":
                due = own - (sum(points) - own) / (ref.num_sides - 1)
            else:
                due = 0.0 if not (winners and all(env.terminations.values())) else (1.0 if agent in winners else -1.0)
            if abs(env.rewards[agent] - due) > 1e-9:
                raise Violation("rewards", f"reward={mode!r}: {agent} is paid {env.rewards[agent]}, due {due} (points {list(points)})")

