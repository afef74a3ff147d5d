"""Pure game logic of each variant (RULES.md), usable without PettingZoo."""

from whist_env.rules.base import StepOutcome, TrickTakingGame
from whist_env.rules.bid_whist import BidWhist, BidWhistOptions
from whist_env.rules.classic import ClassicOptions, ClassicWhist
from whist_env.rules.cutthroat import CutthroatOptions, CutthroatWhist
from whist_env.rules.german import GermanOptions, GermanWhist
from whist_env.rules.minnesota import MinnesotaOptions, MinnesotaWhist
from whist_env.rules.romanian import RomanianOptions, RomanianWhist
from whist_env.rules.spades import Spades, SpadesOptions

__all__ = [
    "BidWhist",
    "BidWhistOptions",
    "ClassicOptions",
    "ClassicWhist",
    "CutthroatOptions",
    "CutthroatWhist",
    "GermanOptions",
    "GermanWhist",
    "MinnesotaOptions",
    "MinnesotaWhist",
    "RomanianOptions",
    "RomanianWhist",
    "Spades",
    "SpadesOptions",
    "StepOutcome",
    "TrickTakingGame",
]
