"""`cinqmille fair`: the head start of each later seat that brings the seats' chances closest to even."""

from __future__ import annotations

import click

from ..fair import FairStart, fair_start
from ..parsing import WholeNumber
from ..solver.budget import Limits
from ..solver.n_player import MAX_PLAYERS
from ..words import ORDINALS
from .common import emit_json, friendly_errors, json_option, resolve_rules, rules_option



def sentences(fair: FairStart) -> list[str]:
    """The text of `fair`: the chances before, the head starts, the chances after."""
    rules, n = fair.rules, fair.players
    share = ", ".join(f"{ORDINALS[i]} {p:.2%}" for i, p in enumerate(fair.win_before))
    lines = [f"Ruleset '{rules.name}', {n} players, best play: {share} from the ruleset's start."]
    heads = [f"the {ORDINALS[i]} player starts with {s} points"
             + ("" if fair.opened[i] or not s else f" (not opened: his first bank must still reach {rules.opening}, "
                                                   f"and adds to them)")
             for i, s in enumerate(fair.start) if i]
    if not any(fair.start):
        lines.append("No head start brings the chances closer to even.")
    else:
        after = ", ".join(f"{ORDINALS[i]} {p:.2%}" for i, p in enumerate(fair.win_after))
        lines.append(f"Fairest head start: {'; '.join(heads)}. Then: {after}.")
    if not fair.exact:
        lines.append("Not exact for this ruleset; assumptions:")
        lines.extend(f"  - {item}" for item in fair.assumptions)
    return lines


@click.command("fair")
@rules_option
@click.option("--players", type=WholeNumber(2, MAX_PLAYERS), default=2, show_default=True,
              help=f"Players at the table (2 to {MAX_PLAYERS}).")
@json_option
@friendly_errors
def command(rules_spec: str, players: int, as_json: bool) -> None:
    """The head start of each later seat (multiples of 50) that brings the chances closest to even."""
    fair = fair_start(resolve_rules(rules_spec), players, limits=Limits.from_env())
    if as_json:
        emit_json(fair.as_dict())
        return
    for line in sentences(fair):
        click.echo(line)
