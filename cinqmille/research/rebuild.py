"""The sections of docs/variants.md beyond the comparison's tables, computed by the page's one command.

`cinqmille compare --markdown docs/variants.md --plots docs/figures --jobs 2`
writes every section: the three-player ones from `three_players` (each preset
solved for three players, three optimal players played against the solve, the
reduced player at six players in play; `research/three.py`), and the others
from `extra_sections`, placed before the figures by `page.markdown`:

- the strategy card of the first compared ruleset (`card.card_report`, the
  search of `cinqmille card`), `page.card_section`;
- two, three and four players side by side for the compared rulesets that are
  presets (`players.players_rows`), `page.players_section`;
- the cost of the reduction measured exactly (four players of `standard` at
  the goals `exactness.GOALS`, `exactness.measure_costs`) and the advice's
  estimates against the exact chances (`exactness.measure_gaps`) when
  `standard` is compared, `exactness.section` and `exactness.gaps_section`;
- one rule changed at a time from the first compared ruleset
  (`ablate.ablate`), `ablate.section`.

Each section can still be written alone (`python -m cinqmille.research.page
fair|players|reduction|estimates|card PAGE`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..rules import PRESET_NAMES, Rules
from ..work import working
from . import ablate
from .card import card_report
from . import exactness
from .page import card_section, players_section
from .players import players_rows
from .three import CROWD, check_record, crowd_record, seat_record


def three_players(rulesets: Sequence[Rules], jobs: int = 1) -> dict[str, Any]:
    """The page's three-player figures (`page.three_player_section`): every preset solved for three players (the
    larger ones listed with their estimate), and, when `standard` is compared, three optimal players played
    against its solve and the reduced player at a table of `three.CROWD`."""
    names = [r.name for r in rulesets if r.name in PRESET_NAMES]
    out: dict[str, Any] = {"seats": {}}
    with working("Solving the presets for three players") as update:
        for i, name in enumerate(names):
            update(i / len(names))
            out["seats"][name] = seat_record(name)
        update(1.0)
    if "standard" in names:
        with working("Three optimal players against the solve; the reduced player at six") as update:
            update(0.0)
            out["check"] = {"standard": check_record("standard", jobs=jobs)}
            update(0.5)
            out["reduction"] = {str(CROWD): crowd_record(CROWD, jobs=jobs)}
            update(1.0)
    return out


def extra_sections(rulesets: Sequence[Rules]) -> list[str]:
    """The card, players, reduction and ablation sections of the page for the compared `rulesets` (the first
    is the base of the card and the ablation)."""
    if not rulesets:
        return []
    base = rulesets[0]
    begun = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out = card_section([card_report(base)])
    presets = [r.name for r in rulesets if r.name in PRESET_NAMES]
    if presets:
        out += players_section(players_rows(presets), f"; computed {begun}")
    if "standard" in presets:
        with working("Measuring the cost of the reduction (four players of 'standard')") as update:
            update(0.0)
            measured = exactness.measure_costs()
            gaps = exactness.measure_gaps()
            update(1.0)
        out += exactness.section(measured, f"; computed {begun}") + exactness.gaps_section(gaps, f"; computed {begun}")
    with working(f"One rule changed at a time from '{base.name}'") as update:
        out += ablate.section(ablate.ablate(base, progress=update))
    return out
