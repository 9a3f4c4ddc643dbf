"""cinqmille: the reference optimal-play solver for the French dice game 5000."""

from .errors import CinqmilleError
from .rules import Rules, RulesError, load_rules

__version__ = "0.1.0"
__all__ = ["CinqmilleError", "Rules", "RulesError", "__version__", "load_rules"]
