"""Exact dice arithmetic: scoring of a roll, legal keeps, and per-ruleset roll tables."""

from .reach import reachable, why_unreachable
from .scoring import INSTANT_WIN, Combination, Keep, combinations, counts_of, faces_of, is_bust, legal_keeps, readings, value
from .tables import DiceOdds, DiceTable, dice_tables, odds, rolls_of, ways

__all__ = [
    "INSTANT_WIN", "Combination", "DiceOdds", "DiceTable", "Keep", "combinations", "counts_of", "dice_tables", "faces_of", "is_bust",
    "legal_keeps", "odds", "reachable", "readings", "rolls_of", "value", "ways", "why_unreachable",
]
