"""Pure game logic of each variant (RULES.md), usable without PettingZoo."""

from whist_env.rules.base import StepOutcome, TrickTakingGame
from whist_env.rules.classic import ClassicOptions, ClassicWhist

__all__ = ["ClassicOptions", "ClassicWhist", "StepOutcome", "TrickTakingGame"]
