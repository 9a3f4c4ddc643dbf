"""The rules in force, in words for the table: the key rules the page shows beside the sheet.

`key_rules` says, in one line each, the goal and how the game ends, the
opening and the least bank, and the penalties of a ruleset (RULES.md 4-5),
from its fields; the page writes them as they come (it has no words of its
own for a rule). The full card on demand is the ruleset as `cinqmille rules
show` prints it (`to_toml`).
"""

from __future__ import annotations

from ..rules import Rules


def _goal(rules: Rules) -> str:
    if rules.end == "exact":
        text = f"Exactly {rules.goal} to win: a keep that takes the score past it ends the turn as a bust"
    else:
        text = f"First to {rules.goal} wins"
    if rules.last_round:
        text += "; whoever reaches it gives the players after him in the round one last turn"
    if rules.final_stretch is not None:
        fs = rules.final_stretch
        text += (f"; from {fs.start} a turn counts only if it reaches the goal"
                 + (f" (a bank from below {fs.start} to past it stops at {fs.start})" if fs.cap else ""))
    if rules.five_ones == "win":
        text += "; five 1s in one roll win at once"
    return text + "."


def _opening(rules: Rules) -> str:
    text = (f"Opening: the first bank must be at least {rules.opening}" if rules.opening
            else "No opening: any bank counts from the first turn")
    if rules.min_bank:
        text += f"; after that every bank is at least {rules.min_bank}"
    if rules.take_over:
        text += "; the next player may take over the last bank and its dice in hand"
    return text + "."


def _penalties(rules: Rules) -> str:
    parts = []
    if rules.crosses:
        parts.append("a scoreless turn is a cross; the second cross in a row strikes out the latest score")
    if rules.zero_turns is not None:
        zt = rules.zero_turns
        back = {"zero": "back to 0", "previous": "back to the previous score"}.get(str(zt.to), f"{-int(zt.to)} points lost")
        parts.append(f"{zt.count} scoreless turns in a row: {back}")
    if rules.bust_strikes_last_score:
        parts.append("a bust on all the dice strikes out the latest score")
    if rules.ties == "deadly":
        parts.append("a bank equal to a score on an opponent's sheet strikes that score out")
    elif rules.ties == "knock_back":
        parts.append("a bank equal to an opponent's score sends him back to his previous one")
    if rules.rule_of_50:
        parts.append("a bank that leaves a score ending in 50 scores nothing")
    if not parts:
        return "No penalties: a bust loses the turn's points only."
    return "Penalties: " + "; ".join(parts) + "."


def key_rules(rules: Rules) -> list[dict[str, str]]:
    """The key rules of `rules`, each `{"topic", "text"}`: the goal and end, the opening, the penalties."""
    return [{"topic": "goal", "text": _goal(rules)}, {"topic": "opening", "text": _opening(rules)},
            {"topic": "penalties", "text": _penalties(rules)}]
