"""Rule-based players (DESIGN.md ``agents/``): one module per game, and the card-play knowledge
they share.

=================  =====================================================================
module             what it holds
=================  =====================================================================
``card_play``      what every rule-based player knows: the cards seen and the voids shown
                   (``CardView``), follow-suit and discard choices, the legal actions
``classic``        Classic Whist (RULES.md §2)
``minnesota``      Minnesota Whist (§3): bid cards, High and Low (misère) play
``german``         German Whist (§4): the stock phase and an exact end-game
``romanian``       Romanian Whist (§5): exact bids and must-trump play
``bid_whist``      Bid Whist (§6): the auction, the kitty, uptown / downtown / no-trump
``cutthroat``      Cutthroat Whist (§7): each for self, jokers
``spades``         Partnership Spades (§8): trick-count and nil bids, covering and breaking
                   nils, ducking once the contract is made
=================  =====================================================================

``HEURISTICS`` maps a game name to its player's class; ``EXACT_OPEN_PLAY`` maps a game with an
open phase (every card's place known: German Whist once the stock is gone) to the wrapper that
plays that phase exactly and hands the rest to another policy. Both are read from the games'
descriptors (``GameSpec.heuristic`` and ``GameSpec.exact_open_play``, :mod:`whist_env.games`):
live, read-only mappings in which a game registered later appears too.
"""

from __future__ import annotations

from collections.abc import Mapping

from agents.heuristics.bid_whist import BidWhistHeuristicAgent
from agents.heuristics.classic import ClassicHeuristicAgent
from agents.heuristics.cutthroat import CutthroatHeuristicAgent
from agents.heuristics.german import ExactAfterStock, GermanHeuristicAgent
from agents.heuristics.minnesota import MinnesotaHeuristicAgent
from agents.heuristics.romanian import RomanianHeuristicAgent
from agents.heuristics.spades import SpadesHeuristicAgent
from whist_env import games

#: Game name -> rule-based agent class for that game (a ``card_play.HeuristicAgent`` subclass,
#: built with no arguments), for every game whose descriptor names one (``GameSpec.heuristic``,
#: imported on first use).
HEURISTICS: Mapping[str, type] = games.view(lambda spec: games.load(spec.heuristic), where=lambda spec: spec.heuristic is not None)

#: Game name -> wrapper ``(policy) -> policy`` that plays the game's open phase exactly, for every
#: game whose descriptor names one (``GameSpec.exact_open_play``).
EXACT_OPEN_PLAY: Mapping[str, type] = games.view(lambda spec: games.load(spec.exact_open_play),
                                                 where=lambda spec: spec.exact_open_play is not None)

__all__ = [
    "EXACT_OPEN_PLAY",
    "HEURISTICS",
    "ExactAfterStock",
    "BidWhistHeuristicAgent",
    "ClassicHeuristicAgent",
    "CutthroatHeuristicAgent",
    "GermanHeuristicAgent",
    "MinnesotaHeuristicAgent",
    "RomanianHeuristicAgent",
    "SpadesHeuristicAgent",
]
