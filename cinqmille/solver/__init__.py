"""The exact win-maximising solver; see `two_player` for the model and its equations."""

from .api import OBJECTIVES, compute, load, save, solve
from .cache import CorruptTable, cache_dir, solver_version
from .result import SolveResult, parse_faces
from .two_player import relaxations

__all__ = [
    "OBJECTIVES", "CorruptTable", "SolveResult", "cache_dir", "compute",
    "load", "parse_faces", "relaxations", "save", "solve", "solver_version",
]
