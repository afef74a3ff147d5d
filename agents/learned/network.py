"""The masked actor and actor-critic networks shared by every seat (used by ``training.learn.ppo`` and ``NeuralAgent``).

Observations are seat-relative (DESIGN.md "Observations"), so one network plays any seat. Illegal
actions are removed from the policy by setting their logits to :data:`MASKED_LOGIT` before the
softmax; :func:`masked_log_probs` and :func:`masked_entropy` are what sampling, greedy play and
the PPO loss all use, so the policy is the same distribution everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.learned.card_features import CardFeatures
from agents.learned.history_encoder import HistoryEncoder

#: State-dict entries of the actor (what plays): its MLP, the bid head, the suit tables.
_ACTOR_KEYS = ("actor.", "bid.", "bid_scores", "suit_observation", "suit_action", "suit_trump_at")

#: Logit given to illegal actions: exp(MASKED_LOGIT - max) underflows to exactly 0 in float32,
#: yet it stays finite, so ``0 * log p`` terms are 0 rather than NaN.
MASKED_LOGIT = -1.0e9


def _layer(n_in: int, n_out: int, std: float) -> nn.Linear:
    # Orthogonal init as in CleanRL's PPO: keeps early logits small (near-uniform legal policy).
    layer = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


def _mlp(sizes: Sequence[int], out: int, out_std: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [_layer(a, b, float(np.sqrt(2.0))), nn.Tanh()]
    layers.append(_layer(sizes[-1], out, out_std))
    return nn.Sequential(*layers)


#: Actor architectures (``architecture["actor"]``): one logit per action off an MLP, or card-centric.
ACTORS = ("mlp", "cards")


class CardActor(nn.Module):
    """A card-centric actor: each card action is scored from its own features.

    A trunk (ReLU MLP of ``hidden_sizes``) reads the observation; the logit of card ``c`` is a
    small MLP of the sum of a projection of the trunk's output, a projection of ``c``'s
    features (:class:`agents.learned.card_features.CardFeatures`: would it win the trick now, is
    it the highest unseen card of its suit, ...) and a learned embedding of ``c``. The same MLP
    scores every card, so what it learns about one card holds for the others (DouZero, Zha et
    al. 2021, scores each action from its own encoding). Actions after the cards (bids, pass,
    trump calls) get a linear logit off the trunk.

    With ``history`` (an observation made with ``observation="history"``) the trunk reads the
    observation before its history blocks and the :class:`HistoryEncoder`'s summary of the
    hand's actions in order; without it, an observation's history blocks are not read.

    Args:
        obs_size: D. num_actions: A (the first C of them are the cards).
        hidden_sizes: the trunk's widths.
        features: the per-card features of the game's observation.
        card_width: E, width of the card head.
        vector_size: the observation's entries before its history blocks (D without them).
        history: the encoder of the history rows, or ``None``.
    """

    def __init__(self, obs_size: int, num_actions: int, hidden_sizes: Sequence[int], features: CardFeatures,
                 card_width: int = 128, vector_size: int | None = None, history: HistoryEncoder | None = None) -> None:
        super().__init__()
        self.features = features
        self.num_cards = features.num_cards
        self.vector_size = obs_size if vector_size is None else int(vector_size)
        self.history = history
        sizes = [self.vector_size + (history.width if history is not None else 0), *hidden_sizes]
        layers: list[nn.Module] = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [_layer(a, b, float(np.sqrt(2.0))), nn.ReLU()]
        self.trunk = nn.Sequential(*layers)
        self.other = _layer(sizes[-1], num_actions, 0.01)
        self.context = _layer(sizes[-1], card_width, 1.0)
        self.card_in = _layer(features.size, card_width, 1.0)
        self.card_embedding = nn.Parameter(torch.zeros(self.num_cards, card_width))
        self.card_head = nn.Sequential(nn.ReLU(), _layer(card_width, card_width, float(np.sqrt(2.0))), nn.ReLU(),
                                       _layer(card_width, 1, 0.01))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Raw logits float32 ``(B, A)`` of observations float32 ``(B, D)``."""
        vector = obs[:, : self.vector_size]
        h = self.trunk(vector if self.history is None else torch.cat([vector, self.history(obs)], 1))
        z = self.context(h)[:, None, :] + self.card_in(self.features(obs)) + self.card_embedding
        cards = self.card_head(z).squeeze(-1)
        return torch.cat([cards, self.other(h)[:, self.num_cards :]], 1)


class PolicyNet(nn.Module):
    """The actor alone: an MLP from the seat-relative observation to masked logits. This is
    what plays (``NeuralAgent``, training opponents); it never reads hidden cards.

    With ``bid_features`` the actor also has a **bid head**: a second MLP giving, for every
    action, the value (the hand's return in scaled points) of choosing it in a bidding phase,
    learned by Monte-Carlo regression (Deep Monte-Carlo, Zha et al. 2021, DouZero). A decision
    is a bid when any of the observation entries ``bid_features`` is 1 (the rules'
    ``BIDDING_PHASES`` in the ``phase`` one-hot); there the policy is ε-greedy on the bid
    values (``bid_epsilon``, 0 for play: the best legal bid), elsewhere the softmax of the
    actor's logits.

    With ``bid_scores`` as well the bid head is a **trick forecast** instead: it gives the
    distribution of the tricks the bidder's side will take in the hand, ``P(t)`` for ``t`` in
    ``0..T``, and every bid is valued from that one forecast by its expected score under the
    rules, ``bid_scores @ P`` (the rules' ``bid_forecast_scores()``, in points). A bid's value is
    then learned from every hand, not only from the hands on which that bid was made.

    Args:
        obs_size: D, length of the float32 observation vector.
        num_actions: A, size of the game's ``Discrete`` action space.
        hidden_sizes: widths of the hidden layers (tanh activations).
        bid_features: observation indices marking a bidding decision (empty: no bid head).
        bid_prior: initial value of every bid (scaled points). A pessimistic prior keeps greedy
            bidding to the bids that have been tried and valued, until exploration has valued
            the others (an untried bid would otherwise look as good as 0 points).
        suit_tables: the canonical suit relabelling of the game
            (:meth:`whist_env.envs.symmetry.SuitSymmetry.canonical_tables`): the network then
            reads every observation with trump relabelled as clubs and answers in the
            environment's own action order (``None``: no relabelling). Kept as buffers in the
            state dict.
        architecture: the actor's kind (:func:`architecture`): ``{"actor": "mlp"}`` (the
            default, ``None``) or ``{"actor": "cards", "card_width": E, "layout": {name: [start,
            stop]}, "num_players": N}`` (:class:`CardActor`; ``layout`` is the environment's
            ``observation_layout()``). Stored in checkpoints; a forecast bid head adds
            ``"bid_outcomes": T + 1``.
        bid_scores: float ``(A, T + 1)``, the points of each bid by the tricks taken: makes the
            bid head a trick forecast (``None``: a value per bid, or the one the architecture
            names, filled by ``load_state_dict``).
    Raises:
        ValueError: ``hidden_sizes`` is empty, a bid feature lies outside ``[0, D)``, the
            architecture is unknown or incomplete, or ``bid_scores`` has the wrong shape or
            comes without ``bid_features``.
    """

    def __init__(self, obs_size: int, num_actions: int, hidden_sizes: Sequence[int] = (256, 256),
                 bid_features: Sequence[int] = (), bid_prior: float = 0.0,
                 suit_tables: Mapping[str, np.ndarray | torch.Tensor] | None = None,
                 architecture: Mapping[str, Any] | None = None, bid_scores: np.ndarray | torch.Tensor | None = None) -> None:
        super().__init__()
        if not hidden_sizes:
            raise ValueError("hidden_sizes must name at least one hidden layer")
        self.obs_size = int(obs_size)
        self.num_actions = int(num_actions)
        self.hidden_sizes = [int(h) for h in hidden_sizes]
        self.bid_features = [int(i) for i in bid_features]
        if any(not 0 <= i < self.obs_size for i in self.bid_features):
            raise ValueError(f"bid_features must lie in [0, {self.obs_size}), got {self.bid_features}")
        #: exploration of the bid head: the share of bidding decisions made uniformly at random
        self.bid_epsilon = 0.0
        self.architecture = _plain_architecture(architecture)
        if bid_scores is not None:
            scores = torch.as_tensor(np.asarray(bid_scores), dtype=torch.float32)
            if scores.ndim != 2 or scores.shape[0] != self.num_actions or scores.shape[1] < 2:
                raise ValueError(f"bid_scores must have shape ({self.num_actions}, T + 1) with T >= 1, got {tuple(scores.shape)}")
            self.architecture["bid_outcomes"] = int(scores.shape[1])
        outcomes = int(self.architecture.get("bid_outcomes", 0))
        if outcomes and not self.bid_features:
            raise ValueError("a forecast bid head needs bid_features (the observation entries marking a bid)")
        #: T + 1 of a forecast bid head (the tricks 0..T it forecasts), 0 for a value per bid
        self.bid_outcomes = outcomes
        if self.architecture["actor"] == "cards":
            layout = {name: slice(int(a), int(b)) for name, (a, b) in self.architecture["layout"].items()}
            players = int(self.architecture["num_players"])
            features = CardFeatures(layout, players)
            width = int(self.architecture.get("history_width", 0))
            history = HistoryEncoder(layout, players, self.num_actions, width) if width else None
            if history is not None and suit_tables is not None:
                raise ValueError("canonical suits cannot relabel the action ids of the history rows: train a history actor "
                                 "without canonical_suits")
            vector_size = layout["history"].start if "history" in layout else self.obs_size
            self.actor: nn.Module = CardActor(self.obs_size, self.num_actions, self.hidden_sizes, features,
                                              int(self.architecture["card_width"]), vector_size, history)
        else:
            self.actor = _mlp([self.obs_size, *self.hidden_sizes], self.num_actions, 0.01)
        self.bid = _mlp([self.obs_size, *self.hidden_sizes], outcomes or self.num_actions, 0.01) if self.bid_features else None
        if self.bid is not None and not outcomes:
            nn.init.constant_(self.bid[-1].bias, float(bid_prior))
        if outcomes:
            self.register_buffer("bid_scores", scores if bid_scores is not None else torch.zeros(self.num_actions, outcomes))
        self.register_buffer("_bid_index", torch.tensor(self.bid_features, dtype=torch.long), persistent=False)
        self.canonical_suits = suit_tables is not None
        if suit_tables is not None:  # stored with the weights: a loaded network relabels as it was trained
            shapes = {"observation": (5, self.obs_size), "action": (5, self.num_actions), "action_inverse": (5, self.num_actions),
                      "trump_at": (1,)}
            for key, shape in shapes.items():
                table = torch.as_tensor(np.asarray(suit_tables[key]), dtype=torch.long)
                if tuple(table.shape) != shape:
                    raise ValueError(f"suit table {key!r} has shape {tuple(table.shape)}, expected {shape}")
                self.register_buffer(f"suit_{key}", table)

    def _relabel(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(row of the suit tables per observation (B,), relabelled observations (B, D))``."""
        at = int(self.suit_trump_at[0])
        row = obs[:, at : at + 5].argmax(-1)
        return row, obs.gather(1, self.suit_observation[row])

    def bidding(self, obs: torch.Tensor) -> torch.Tensor:
        """Which rows are bidding decisions: bool ``(B,)`` (all ``False`` without a bid head).

        Args:
            obs: float32 ``(B, D)`` observations.
        """
        if self.bid is None:
            return torch.zeros(obs.shape[0], dtype=torch.bool, device=obs.device)
        return obs.index_select(1, self._bid_index).sum(-1) > 0

    def bid_values(self, obs: torch.Tensor) -> torch.Tensor:
        """The bid head's value of every action: float32 ``(B, A)`` (scaled points; only legal
        bids mean anything).

        Raises:
            ValueError: the network has no bid head.
        """
        if self.bid is None:
            raise ValueError("this network has no bid head (no bid_features)")
        if self.bid_outcomes:
            return self.bid_forecast(obs).exp() @ self.bid_scores.T
        if not self.canonical_suits:
            return self.bid(obs)
        row, obs = self._relabel(obs)
        return self.bid(obs).gather(1, self.suit_action_inverse[row])

    def bid_forecast(self, obs: torch.Tensor) -> torch.Tensor:
        """The forecast bid head's log-probabilities of the tricks ``0..T`` the bidder's side
        will take: float32 ``(B, T + 1)``.

        Raises:
            ValueError: the bid head is not a forecast.
        """
        if not self.bid_outcomes:
            raise ValueError("this network's bid head is not a trick forecast (no bid_scores)")
        if self.canonical_suits:
            _, obs = self._relabel(obs)
        return torch.log_softmax(self.bid(obs), -1)

    def _canonical_bid_values(self, obs: torch.Tensor, row: torch.Tensor | None) -> torch.Tensor:
        """Bid values ``(B, A)`` of already relabelled observations, in the relabelled action
        order (``row``: their rows of the suit tables, ``None`` without relabelling)."""
        if not self.bid_outcomes:
            return self.bid(obs)
        values = torch.softmax(self.bid(obs), -1) @ self.bid_scores.T  # in the environment's action order
        return values if row is None else values.gather(1, self.suit_action[row])

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Masked logits: float32 ``(B, A)``; illegal entries (``mask == 0``) are :data:`MASKED_LOGIT`.

        Rows that are bidding decisions (see :meth:`bidding`) hold the log-probabilities of the
        ε-greedy policy on :meth:`bid_values` (no gradient flows through them).

        Args:
            obs: float32 ``(B, D)``, observation vectors (never the global state).
            mask: ``(B, A)`` 0/1 (any dtype; nonzero = legal); every row needs a legal action.
        """
        row = None
        if self.canonical_suits:
            row, obs = self._relabel(obs)
            mask = mask.gather(1, self.suit_action[row])
        raw = self.actor(obs)
        if self.bid is not None:
            rows = self.bidding(obs).nonzero().squeeze(-1)
            if rows.numel():
                with torch.no_grad():
                    legal = mask.index_select(0, rows) != 0
                    values = self._canonical_bid_values(obs.index_select(0, rows), None if row is None else row.index_select(0, rows))
                    values = values.masked_fill(~legal, -math.inf)
                    best = nn.functional.one_hot(values.argmax(-1), self.num_actions).bool()
                    eps = float(self.bid_epsilon)
                    probs = eps * legal / legal.sum(-1, keepdim=True) + (1.0 - eps) * best
                    greedy = torch.where(probs > 0, probs.clamp_min(1e-30).log(), torch.full_like(probs, MASKED_LOGIT))
                raw = raw.index_put((rows,), greedy)
        out = raw.masked_fill(mask == 0, MASKED_LOGIT)
        return out if row is None else out.gather(1, self.suit_action_inverse[row])

    def frozen(self) -> PolicyNet:
        """This network in eval mode with gradients off (a snapshot, an opponent); returns self."""
        self.eval()
        for p in self.parameters():
            p.requires_grad_(False)
        return self

    @classmethod
    def from_actor_critic_state(cls, state: Mapping[str, torch.Tensor], obs_size: int, num_actions: int,
                                hidden_sizes: Sequence[int], bid_features: Sequence[int] = (),
                                architecture: Mapping[str, Any] | None = None) -> PolicyNet:
        """The actor of an :class:`ActorCritic` state dict (its ``actor.*`` and ``bid.*``
        entries and suit tables; the critic, which may read the global state, is left out).

        Raises:
            ValueError: the weights do not fit the declared sizes or architecture.
        """
        tables = {k[len("suit_"):]: v for k, v in state.items() if k.startswith("suit_") and k != "suit_state"} or None
        try:
            net = cls(obs_size, num_actions, hidden_sizes, bid_features, suit_tables=tables, architecture=architecture)
            net.load_state_dict({k: v for k, v in state.items() if k.startswith(_ACTOR_KEYS)})
        except RuntimeError as exc:
            raise ValueError(f"actor weights do not fit their declared shapes: {exc}") from exc
        return net


class ActorCritic(PolicyNet):
    """Actor (:class:`PolicyNet`) and critic MLPs with separate trunks.

    The critic reads ``critic_input_size`` floats: the observation itself (the default), or,
    for a centralised critic (asymmetric actor-critic as in MAPPO, Yu et al. 2022, and
    PerfectDou, Yang et al. 2022), the environment's global ``state()`` with every hidden hand.
    Only training reads the critic; play uses the actor alone.

    Args:
        obs_size: D, length of the float32 observation vector (the actor's input).
        num_actions: A, size of the game's ``Discrete`` action space.
        hidden_sizes: widths of the hidden layers of each trunk (tanh activations).
        critic_input_size: length of the critic's input (``None``: ``obs_size``).
        bid_features, bid_prior, bid_scores: the bid head (see :class:`PolicyNet`).
    """

    def __init__(self, obs_size: int, num_actions: int, hidden_sizes: Sequence[int] = (256, 256),
                 critic_input_size: int | None = None, bid_features: Sequence[int] = (), bid_prior: float = 0.0,
                 suit_tables: Mapping[str, np.ndarray | torch.Tensor] | None = None,
                 architecture: Mapping[str, Any] | None = None, bid_scores: np.ndarray | torch.Tensor | None = None) -> None:
        super().__init__(obs_size, num_actions, hidden_sizes, bid_features, bid_prior, suit_tables, architecture, bid_scores)
        self.critic_input_size = int(obs_size if critic_input_size is None else critic_input_size)
        self.critic = _mlp([self.critic_input_size, *self.hidden_sizes], 1, 1.0)
        if suit_tables is not None:  # the critic relabels its input too: the state's table, or the observation's
            table = suit_tables["state"] if self.critic_input_size != self.obs_size else suit_tables["observation"]
            table = torch.as_tensor(np.asarray(table), dtype=torch.long)
            if tuple(table.shape) != (5, self.critic_input_size):
                raise ValueError(f"suit table for the critic has shape {tuple(table.shape)}, expected {(5, self.critic_input_size)}")
            self.register_buffer("suit_state", table)

    def value(self, critic_input: torch.Tensor) -> torch.Tensor:
        """Value from the acting seat's point of view: float32 ``(B,)`` (in scaled reward units).

        Args:
            critic_input: float32 ``(B, critic_input_size)``: the observation, or the global
                state for a centralised critic.
        """
        if self.canonical_suits:
            at = int(self.suit_trump_at[0])  # the state begins with the observation's entries
            critic_input = critic_input.gather(1, self.suit_state[critic_input[:, at : at + 5].argmax(-1)])
        return self.critic(critic_input).squeeze(-1)

    def policy(self) -> PolicyNet:
        """A frozen copy of the actor alone, bid head included (for opponents and play; its
        ``bid_epsilon`` is 0)."""
        return PolicyNet.from_actor_critic_state(self.state_dict(), self.obs_size, self.num_actions, self.hidden_sizes,
                                                 self.bid_features, self.architecture).to(next(self.parameters()).device).frozen()


def architecture(actor: str, layout: Mapping[str, slice] | None = None, num_players: int | None = None,
                 card_width: int = 128, history_width: int = 0) -> dict[str, Any]:
    """The ``architecture`` entry of a network (:class:`PolicyNet`) as plain types.

    Args:
        actor: one of :data:`ACTORS`.
        layout, num_players: the environment's ``observation_layout()`` and player count (the
            ``"cards"`` actor derives its card features from them).
        card_width: width of the card head (``"cards"``).
        history_width: H > 0: the ``"cards"`` actor reads the hand's actions in order through a
            :class:`HistoryEncoder` of width H (the layout must have the history blocks of
            ``observation="history"``); 0: it does not.
    Raises:
        ValueError: an unknown actor, ``"cards"`` without a layout and player count, or a
            history width with another actor or a layout without history blocks.
    """
    if history_width and (actor != "cards" or layout is None or "history" not in layout):
        raise ValueError("history_width needs the 'cards' actor and an observation with history blocks "
                         "(the rule option observation='history')")
    if actor == "mlp":
        return {"actor": "mlp"}
    if actor == "cards":
        if layout is None or num_players is None:
            raise ValueError("the 'cards' actor needs the observation layout and the number of players")
        return _plain_architecture({"actor": "cards", "card_width": card_width, "num_players": num_players,
                                    "layout": {name: [sl.start, sl.stop] for name, sl in layout.items()},
                                    "history_width": history_width})
    raise ValueError(f"unknown actor {actor!r}; expected one of {list(ACTORS)}")


def _plain_architecture(arch: Mapping[str, Any] | None) -> dict[str, Any]:
    """``arch`` checked and as plain types (``None``: the MLP actor).

    Raises:
        ValueError: an unknown actor or a missing entry.
    """
    if arch is None:
        return {"actor": "mlp"}
    out = _plain_actor(arch)
    if int(arch.get("bid_outcomes", 0)):
        out["bid_outcomes"] = int(arch["bid_outcomes"])
    return out


def _plain_actor(arch: Mapping[str, Any]) -> dict[str, Any]:
    actor = arch.get("actor")
    if actor == "mlp":
        return {"actor": "mlp"}
    if actor != "cards":
        raise ValueError(f"unknown actor {actor!r}; expected one of {list(ACTORS)}")
    missing = [key for key in ("card_width", "layout", "num_players") if key not in arch]
    if missing:
        raise ValueError(f"the 'cards' actor's architecture lacks {missing}")
    width, players = int(arch["card_width"]), int(arch["num_players"])
    if width < 1 or players < 2:
        raise ValueError(f"the 'cards' actor needs card_width >= 1 and num_players >= 2, got {width} and {players}")
    layout = {str(name): [int(bounds[0]), int(bounds[1])] for name, bounds in dict(arch["layout"]).items()}
    out = {"actor": "cards", "card_width": width, "num_players": players, "layout": layout}
    history = int(arch.get("history_width", 0))
    if history < 0 or (history and "history" not in layout):
        raise ValueError(f"the 'cards' actor's history_width must be 0, or > 0 with history blocks in its layout, got {history}")
    if history:  # absent, not 0, in the architectures of actors without it
        out["history_width"] = history
    return out


def masked_log_probs(logits: torch.Tensor) -> torch.Tensor:
    """Log-probabilities float32 ``(B, A)`` of masked logits (illegal entries ≈ -1e9)."""
    return torch.log_softmax(logits, dim=-1)


def masked_entropy(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy float32 ``(B,)`` of the masked distribution (illegal actions contribute 0)."""
    logp = masked_log_probs(logits)
    p = logp.exp()
    return -(p * logp).masked_fill(mask == 0, 0.0).sum(-1)


def sample_actions(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Sample one action per row from masked logits: int64 ``(B,)``; never an illegal action.

    Draws with ``torch.multinomial`` from ``generator`` (so the training stream does not share
    torch's global RNG with other code); masked actions have probability exactly 0.
    """
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def greedy_actions(logits: torch.Tensor) -> torch.Tensor:
    """Most probable legal action per row: int64 ``(B,)``."""
    return logits.argmax(dim=-1)
