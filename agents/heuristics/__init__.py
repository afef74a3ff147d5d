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
=================  =====================================================================

``HEURISTICS`` maps a game name to its player's class; ``EXACT_OPEN_PLAY`` maps a game with an
open phase (every card's place known: German Whist once the stock is gone) to the wrapper that
plays that phase exactly and hands the rest to another policy.
"""

from __future__ import annotations

from agents.heuristics.bid_whist import BidWhistHeuristicAgent
from agents.heuristics.classic import ClassicHeuristicAgent
from agents.heuristics.cutthroat import CutthroatHeuristicAgent
from agents.heuristics.german import ExactAfterStock, GermanHeuristicAgent
from agents.heuristics.minnesota import MinnesotaHeuristicAgent
from agents.heuristics.romanian import RomanianHeuristicAgent

#: Game name -> rule-based agent class for that game.
HEURISTICS: dict[str, type] = {
    "classic_whist": ClassicHeuristicAgent,
    "minnesota_whist": MinnesotaHeuristicAgent,
    "german_whist": GermanHeuristicAgent,
    "cutthroat_whist": CutthroatHeuristicAgent,
    "romanian_whist": RomanianHeuristicAgent,
    "bid_whist": BidWhistHeuristicAgent,
}

#: Game name -> wrapper ``(policy) -> policy`` that plays the game's open phase exactly.
EXACT_OPEN_PLAY: dict[str, type] = {"german_whist": ExactAfterStock}

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
]
