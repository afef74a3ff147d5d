"""Variant-agnostic core: cards, bitmask hands, tricks, rank orders, dealing, double-dummy solving
(the pure-Python reference `double_dummy` and the compiled `compiled_double_dummy`; DESIGN.md layers)."""

from whist_env.engine.cards import card_from_str, card_to_str
from whist_env.engine.tricks import TrickContext, led_suit, legal_cards, natural_context, trick_winner

__all__ = ["TrickContext", "card_from_str", "card_to_str", "legal_cards", "led_suit", "natural_context", "trick_winner"]
