"""The agent registry: agent specs, their help text and :func:`make_agent`, the one place that
knows every kind of agent (DESIGN.md ``agents/``).

``make_agent(spec, game, seed)`` builds an agent from a short text spec, as the ``whist eval``
command line takes them: ``"random"``, ``"heuristic"`` (the game's rule-based player) or
``"checkpoint:PATH"`` (a trained network, :class:`agents.learned.neural.NeuralAgent`), ``"zoo:GAME"``
(the model zoo's trained agent of a game, :mod:`agents.learned.zoo`), ``"sb3:PATH"`` (a
``MaskablePPO`` model zip from ``whist sb3-train``, :class:`agents.learned.sb3.SB3Agent`), ``"rllib:PATH"``
(a ``whist rllib-train`` run or a ``save_policy`` folder, :class:`agents.learned.rllib.RLlibAgent`) or
``"pimc:worlds=K,exact=E,rollouts=R,z=Z,rollout=SPEC,seed=S"`` (Perfect Information Monte Carlo
search, :class:`agents.search.PIMCAgent`) or ``"ismcts:iters=N,seconds=S,c=C,rollout=SPEC,seed=S"``
(information set Monte Carlo tree search, :class:`agents.search.ISMCTSAgent`); a search agent's
options may be left out.
"""

from __future__ import annotations

from agents.base import Policy
from agents.heuristics import HEURISTICS
from agents.random_agent import RandomAgent

#: Agent spec forms accepted by :func:`make_agent`, for help texts and error messages.
AGENT_SPECS = ("random", "heuristic", "checkpoint:PATH", "zoo:GAME", "sb3:PATH", "rllib:PATH", "pimc[:worlds=K,exact=E,rollouts=R,z=Z,rollout=SPEC,seed=S]",
               "ismcts[:iters=N,seconds=S,c=C,rollout=SPEC,seed=S]")


def make_agent(spec: str, game: str, seed: int | None = None) -> Policy:
    """Build the agent described by ``spec`` for ``game``.

    Args:
        spec: ``"random"``, ``"heuristic"``, ``"checkpoint:PATH"``, ``"zoo:GAME"`` (``"zoo"``
            alone: the zoo agent of ``game``), ``"sb3:PATH"``, ``"rllib:PATH"``, ``"pimc[:k=v,...]"`` or ``"ismcts[:k=v,...]"``
            (case-insensitive kind; the path is taken as written).
        game: a game name of ``whist_env.GAMES`` such as ``"classic_whist"``.
        seed: seed of the agent's own random generator (random and search agents; a search
            spec's own ``seed=`` wins), ``None`` for fresh entropy.
    Returns:
        an object implementing :class:`Policy`.
    Raises:
        ValueError: on an unknown spec, an empty path, ``"heuristic"`` for a game that has
            none (the message names the games that have one), a zoo agent of another game or
            one the zoo does not hold (the message names those it holds), or a search agent's
            bad option (the message names it and lists the options).
        ImportError: ``"rllib:PATH"`` without Ray's RLlib (the message names the ``whist-env[rllib]`` extra).
        Errors of :meth:`agents.learned.neural.NeuralAgent.from_checkpoint`,
        :meth:`agents.learned.sb3.SB3Agent.from_zip` and :meth:`agents.learned.rllib.RLlibAgent.from_checkpoint`
        (missing file, a directory, a file of the other kind, a model of another game or shape)
        propagate unchanged.
    """
    if not isinstance(spec, str):
        raise ValueError(f"agent spec must be a string, got {spec!r}; expected one of {', '.join(AGENT_SPECS)}")
    kind, sep, rest = spec.strip().partition(":")
    kind = kind.lower()
    if kind == "random" and not sep:
        return RandomAgent(seed=seed)
    if kind == "heuristic" and not sep:
        try:
            cls = HEURISTICS[game]
        except KeyError:
            raise ValueError(f"no heuristic agent for game {game!r}; games with one: {sorted(HEURISTICS)}") from None
        return cls()
    if kind == "checkpoint" and sep:
        if not rest:
            raise ValueError("agent spec 'checkpoint:' needs a path, e.g. checkpoint:runs/classic/final.pt")
        from agents.learned.neural import NeuralAgent  # torch is heavy: import only when needed

        return NeuralAgent.from_checkpoint(rest, game=game)
    if kind == "zoo":
        from agents.learned.neural import NeuralAgent
        from agents.learned.zoo import zoo_path

        zoo_game = rest.strip() or game
        from whist_env import GAMES

        if zoo_game not in GAMES:
            raise ValueError(f"agent spec {spec!r}: unknown game {zoo_game!r}; games: {sorted(GAMES)}")
        if zoo_game != game:
            raise ValueError(f"agent spec {spec!r} is the zoo agent of {zoo_game!r}, but the game is {game!r}")
        return NeuralAgent.from_checkpoint(zoo_path(zoo_game), game=game, name=f"zoo:{game}")
    if kind == "pimc":
        from agents.search import PIMCAgent

        return PIMCAgent.from_spec(game, rest, seed=seed, make_policy=make_agent)
    if kind == "ismcts":
        from agents.search import ISMCTSAgent

        return ISMCTSAgent.from_spec(game, rest, seed=seed, make_policy=make_agent)
    if kind == "sb3" and sep:
        if not rest:
            raise ValueError("agent spec 'sb3:' needs a path, e.g. sb3:runs/sb3/model.zip")
        from agents.learned.sb3 import SB3Agent  # stable-baselines3 is heavy: import only when needed

        return SB3Agent.from_zip(rest, game=game)
    if kind == "rllib" and sep:
        if not rest:
            raise ValueError("agent spec 'rllib:' needs a path, e.g. rllib:runs/rllib_classic (a whist rllib-train run folder)")
        from agents.learned.rllib import RLlibAgent  # Ray is heavy and optional: import only when needed

        return RLlibAgent.from_checkpoint(rest, game=game)
    raise ValueError(f"unknown agent spec {spec!r}; expected one of {', '.join(AGENT_SPECS)}")


__all__ = ["AGENT_SPECS", "make_agent"]
