"""The rule book as code: the `Rules` value, presets, TOML loading and validation."""

from .bank import BankRules
from .end import EndRules
from .loading import (
    DEFAULT_RULES,
    PRESET_NAMES,
    RulesError,
    content_key,
    load_rules,
    preset_descriptions,
    rules_from_dict,
    to_dict,
    to_toml,
)
from .model import FinalStretch, Rules, ZeroTurns

__all__ = [
    "BankRules", "DEFAULT_RULES", "EndRules", "PRESET_NAMES", "FinalStretch", "Rules", "RulesError", "ZeroTurns",
    "content_key", "load_rules", "preset_descriptions", "rules_from_dict", "to_dict", "to_toml",
]
