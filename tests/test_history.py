"""The history rules solved for two players (`cinqmille.solver.history`), against a brute force over full sheets.

The brute force (`brute_force_history`) holds every player's whole sheet; the
solver holds the abstract one and bounds what it does not hold. At every turn
start of the brute force the truth must lie in the solver's interval, and equal
it where the interval is zero.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.rules.loading import rules_from_dict
from cinqmille.solver.budget import TooLarge
from cinqmille.solver.history import Sheets, unsupported
from cinqmille.solver.history_solve import HistoryUnsupported, check_history, estimate_history, solve_history
from cinqmille.solver.kernel import TurnKernel
from cinqmille.solver.two_player import solve_game

from brute_force_history import brute_force_history

TINY = {"goal": 300, "opening": 100}
RULES = {
    "knock-back": {"ties": "knock_back"},
    "deadly": {"ties": "deadly"},
    "crosses": {"crosses": True},
    "previous": {"zero_turns": {"count": 2, "to": "previous"}},
    "bust-strikes": {"bust_strikes_last_score": True},
    "crosses-strikes-exact": {"crosses": True, "bust_strikes_last_score": True, "end": "exact"},
    "deadly-previous-exact": {"ties": "deadly", "zero_turns": {"count": 3, "to": "previous"}, "end": "exact"},
}
SLOW = {
    "knock-back-400-exact": {"goal": 400, "opening": 150, "ties": "knock_back", "end": "exact"},
    "crosses-strikes-400": {"goal": 400, "opening": 150, "crosses": True, "bust_strikes_last_score": True},
    "deadly-previous-400": {"goal": 400, "opening": 150, "ties": "deadly", "zero_turns": {"count": 2, "to": "previous"}},
}


def compare(spec: dict[str, Any]) -> tuple[float, dict[Any, float]]:
    """The largest step of the truth out of the interval over every turn start, and each one's interval width."""
    rules = rules_from_dict(spec)
    truth = brute_force_history(rules)
    solved = solve_history(rules)
    sheets = solved.sheets
    out = 0.0
    widths = {}
    for (x, y), value in truth.items():
        i = sheets.of_history(tuple(s // 50 for s in x[0]), x[1])
        j = sheets.of_history(tuple(s // 50 for s in y[0]), y[1])
        lo, hi = solved.chance(i, j)
        assert lo <= hi + 1e-15
        out = max(out, lo - value, value - hi)
        widths[(x, y)] = hi - lo
        if hi - lo <= 1e-13:
            assert value == pytest.approx(lo, abs=2e-12), (x, y)
    lo, hi = solved.first_seat
    start = truth[(((), 0), ((), 0))]
    assert lo - 2e-12 <= start <= hi + 2e-12
    return out, widths


@pytest.mark.parametrize("name", list(RULES))
def test_history_bounds_hold_the_brute_force(name: str, session_cache: Path) -> None:
    """At every turn start of a tiny ruleset the full-sheet truth lies within the solver's bounds (to 2e-12)."""
    out, widths = compare({**TINY, **RULES[name]})
    assert out <= 2e-12
    if name in ("crosses", "previous", "bust-strikes", "crosses-strikes-exact"):
        assert max(widths.values()) > 1e-6  # the bounds are exercised: some rows fall below an unknown entry


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SLOW))
def test_history_bounds_hold_the_brute_force_slow(name: str, session_cache: Path) -> None:
    """The same at goal 400, opening 150 (a few minutes)."""
    out, widths = compare(SLOW[name])
    assert out <= 2e-12 and max(widths.values()) > 1e-6


def test_history_is_exact_where_no_third_entry_can_stand(session_cache: Path) -> None:
    """Where banks of at least 150 cannot write a third total below a goal of 400, nothing is bounded: the
    bounds meet at every turn start that play can reach (sheets of banks 150 apart, at most two) and equal the
    brute force; they part only at sheets no game writes."""
    spec = {"goal": 400, "opening": 150, "min_bank": 150, "ties": "deadly", "bust_strikes_last_score": True}
    out, widths = compare(spec)

    def written(standing: tuple[int, ...]) -> bool:
        return len(standing) <= 2 and all(b - a >= 150 for a, b in zip(standing, standing[1:]))

    reached = [w for (x, y), w in widths.items() if written(x[0]) and written(y[0])]
    assert out <= 2e-12 and len(reached) > 50 and max(reached) <= 1e-13 < max(widths.values())
    assert solve_history(rules_from_dict(spec)).exact


def test_history_rules_change_the_chances(session_cache: Path) -> None:
    """The history model is not the relaxation: each rule moves the first seat's chance at goal 400."""
    for name in ("knock-back", "crosses", "bust-strikes", "deadly-previous-exact"):
        extra = RULES[name]
        base = {"goal": 400, "opening": 150, "end": extra.get("end", "reach")}
        relaxed = solve_game(rules_from_dict(base))[0][0, 0]
        lo, hi = solve_history(rules_from_dict({**base, **extra})).first_seat
        assert abs((lo + hi) / 2 - relaxed) > 1e-5, extra


def test_strike_of_nan_is_the_plain_pass(session_cache: Path) -> None:
    """The kernel's leaf for a bust on all the dice changes nothing where it is NaN, and moves a row where set."""
    rules = rules_from_dict(TINY)
    kernel = TurnKernel(rules)
    w = solve_game(rules)[0]
    from cinqmille.solver.two_player import GameModel, level_rows

    model = GameModel(rules, kernel)
    seat, a, b = level_rows(model, 2)
    caps = model.caps(seat, a)
    bank = model.bank(seat, a, b, int(caps.max()), w[None])
    l0 = model.bust_value(seat, a, b, w[None])
    plain = kernel.run(a, caps, bank, l0)
    same = kernel.run(a, caps, bank, l0, strike=np.full(len(a), np.nan))
    assert np.array_equal(plain[0], same[0]) and np.array_equal(plain[1], same[1])
    moved = kernel.run(a, caps, bank, l0, strike=np.zeros(len(a)))
    assert (moved[0] + moved[1] * l0 < plain[0] + plain[1] * l0).all()


def test_sheets_of_real_histories() -> None:
    """A real sheet maps to its abstract one: the score, the entry before it, whether more stand below."""
    sheets = Sheets.of(rules_from_dict({**TINY, "crosses": True}))
    i = sheets.of_history((2, 4, 5), 1)
    assert (sheets.a[i], sheets.p[i], sheets.d[i], sheets.c[i]) == (5, 4, 1, 1)
    assert sheets.of_history(()) == sheets.start()
    with pytest.raises(ValueError):
        sheets.of_history((4, 2))
    assert len(sheets.a) == int(Sheets.count(sheets.rules).sum())


def test_unsupported_and_too_large_are_refused_in_one_line() -> None:
    """`sheet` (last round, take-over) is not in the model yet; full-size `standard` with ties is too large."""
    assert "last round" in (unsupported(rules_from_dict({"base": "sheet"})) or "")
    assert unsupported(rules_from_dict({"base": "standard"})) == "the ruleset has no history rule"
    with pytest.raises(HistoryUnsupported):
        check_history(rules_from_dict({"base": "sheet"}))
    big = rules_from_dict({"base": "standard", "ties": "knock_back"})
    with pytest.raises(TooLarge, match="turn states a sweep"):
        check_history(big)
    assert estimate_history(big).sheets == int(Sheets.count(big).sum())


def test_solve_command_reports_the_interval(session_cache: Path, tmp_path: Path) -> None:
    """`cinqmille solve` on a history ruleset: the history model, both seats' bounds, no history assumption;
    `--relaxed` is the old relaxation; an unsupported ruleset is relaxed and says why; too large is one line."""
    path = tmp_path / "crosses.toml"
    path.write_text('goal = 300\nopening = 100\ncrosses = true\n')
    runner = CliRunner()
    out = runner.invoke(main, ["solve", "--rules", str(path), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    (lo, hi), (lo2, hi2) = data["win_bounds"]
    assert data["model"] == "history" and lo <= data["first_player_win"] <= hi
    assert lo2 == pytest.approx(1 - hi) and data["assumptions"] == []
    assert data["exact"] == (hi - lo <= 1e-12)
    text = runner.invoke(main, ["solve", "--rules", str(path)])
    assert text.exit_code == 0 and "score history" in text.output
    old = json.loads(runner.invoke(main, ["solve", "--rules", str(path), "--json", "--relaxed"]).output)
    assert old["exact"] is False and any("crosses" in a for a in old["assumptions"])
    lr = tmp_path / "lr.toml"
    lr.write_text('goal = 300\nopening = 100\ncrosses = true\nlast_round = true\n')
    data = json.loads(runner.invoke(main, ["solve", "--rules", str(lr), "--json"]).output)
    assert data["exact"] is False and any("not in the history model yet" in a for a in data["assumptions"])
    big = tmp_path / "big.toml"
    big.write_text('ties = "knock_back"\n')
    refused = runner.invoke(main, ["solve", "--rules", str(big), "--json"])
    assert refused.exit_code == 2 and "turn states a sweep" in refused.output and "Traceback" not in refused.output
