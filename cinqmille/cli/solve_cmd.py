"""`cinqmille solve`: solve a ruleset (or load it from the cache) and print the headline figures."""

from __future__ import annotations

import contextlib
from typing import Any

import click

from ..parsing import WholeNumber
from ..solver import OBJECTIVES, SolveResult, solve
from ..solver.budget import MAX_BYTES, SOLVE_STATES, Limits
from ..solver.history import unsupported
from ..solver.history_solve import HISTORY_STATES, solve_history
from ..solver.level import residual_words
from ..solver.n_player import MAX_PLAYERS
from ..solver.result import Objective
from ..words import ORDINALS
from .common import emit_json, friendly_errors, json_option, resolve_rules, rules_option


def headline(result: SolveResult) -> dict[str, Any]:
    """The figures `solve` prints, as a JSON-ready dict."""
    rules = result.rules
    out: dict[str, Any] = {
        "rules": rules.name,
        "objective": result.objective,
        "states": result.states,
        "seconds": round(result.seconds, 3),
        "residual": result.residual,
        "exact": result.exact,
        "assumptions": list(result.assumptions),
    }
    if result.objective == "win":
        out["players"] = result.players
        out["first_player_win"] = result.first_player_win
        out["win"] = list(result.win)
        if result.players == 2:
            out["second_player_win"] = result.win[1]
    elif result.objective == "expected":
        out["expected_turn_opened"] = result.expected_turn(opened=True)
        out["expected_turn_not_opened"] = result.expected_turn(opened=False)
    elif result.objective == "average":
        out["average_turn"] = result.average_turn()
        out["relative_by_scoreless"] = [float(x) - out["average_turn"] for x in result.values[:, 0, rules.dice - 1]]
    else:
        out["race_turns_from_zero"] = result.race_turns()
    return out


def show_history(data: dict[str, Any], as_json: bool) -> None:
    """Print a history solve's figures (`HistoryResult.headline`)."""
    if as_json:
        emit_json(data)
        return
    (lo, hi), _ = data["win_bounds"]
    click.echo(f"Ruleset '{data['rules']}' with its score history: {data['turn_starts']:,} turn starts, "
               f"{data['states']:,} states a sweep, {data['sweeps']} sweeps, {residual_words(data['residual'])}, "
               f"solved in {data['seconds']:.1f} s.")
    if data["exact"]:
        click.echo(f"First player wins {lo:.4%} of games with best play (second player {1 - lo:.4%}); exact.")
    else:
        click.echo(f"First player wins between {lo:.6%} and {hi:.6%} of games with best play (second player "
                   f"between {1 - hi:.6%} and {1 - lo:.6%}): the history below the previous score is bounded.")
    for item in data["assumptions"]:
        click.echo(f"  - {item}")


@click.command("solve")
@rules_option
@click.option("--objective", type=click.Choice(OBJECTIVES), default="win", show_default=True,
              help="win: chance to win a two-player game; expected: points of one turn; race: turns to the goal alone; "
                   "average: points per turn over a long game (scoreless-turn counts carried).")
@click.option("--players", type=WholeNumber(2, MAX_PLAYERS), default=2, show_default=True,
              help=f"Players at the table (2 to {MAX_PLAYERS}; the win objective).")
@click.option("--no-cache", is_flag=True, help="Solve again even if a cached table exists (and do not write one).")
@click.option("--max-states", type=WholeNumber(1), default=None, metavar="N",
              help=f"Refuse to solve beyond N turn states (default {SOLVE_STATES:,} or $CINQMILLE_MAX_STATES).")
@click.option("--max-memory", type=WholeNumber(1, 1 << 20), default=None, metavar="GIB",
              help=f"Refuse to solve beyond GIB GiB of memory (default {MAX_BYTES >> 30} or $CINQMILLE_MAX_MEMORY).")
@click.option("--relaxed", is_flag=True,
              help="Two players: solve the history rules (crosses, ties, strikes, fall-backs to the previous score) as if "
                   "they were off, the table advise and play read; default: solve them (an interval where the "
                   "history is bounded).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run the solve's passes on the Dask cluster at ADDRESS (tcp://host:8786); default: in this process.")
@json_option
@friendly_errors
def command(rules_spec: str, objective: Objective, players: int, no_cache: bool, max_states: int | None,
            max_memory: int | None, relaxed: bool, scheduler: str | None, as_json: bool) -> None:
    """Solve a ruleset (or load it from the cache) and print its headline figures."""
    rules = resolve_rules(rules_spec)
    if objective == "win" and players == 2 and not relaxed and rules.history_rules and unsupported(rules) is None:
        history = solve_history(rules, limits=Limits.from_env(max_states, max_memory, default_states=HISTORY_STATES))
        show_history(history.headline(), as_json)
        return
    limits = Limits.from_env(max_states, max_memory, default_states=SOLVE_STATES)
    with contextlib.ExitStack() as stack:
        if scheduler is not None:
            from ..solver.distributed import use_cluster  # lazy: start-up time (not for --help)

            stack.enter_context(use_cluster(scheduler))
        result = solve(rules, objective, use_cache=not no_cache, limits=limits,
                       players=players)
    data = headline(result)
    why = unsupported(rules) if objective == "win" and players == 2 and rules.history_rules and not relaxed else None
    if why is not None:
        data["assumptions"].append(f"history rules: {why}; the relaxation above is solved instead")
    if as_json:
        emit_json(data)
        return
    click.echo(f"Ruleset '{rules.name}', objective '{objective}': {data['states']:,} states, "
               f"{residual_words(data['residual'])}, solved in {result.seconds:.1f} s (time of the original solve).")
    if objective == "win" and result.players == 2:
        click.echo(f"First player wins {data['first_player_win']:.2%} of games with best play "
                   f"(second player {data['second_player_win']:.2%}).")
    elif objective == "win":
        seats = ", ".join(f"{name} {p:.2%}" for name, p in zip(ORDINALS[1:], result.win[1:]))
        click.echo(f"With {result.players} players the first wins {result.first_player_win:.2%} of games "
                   f"with best play ({seats}).")
    elif objective == "expected":
        click.echo(f"Best expected points of one turn: {data['expected_turn_opened']:.1f} when opened, "
                   f"{data['expected_turn_not_opened']:.1f} before opening (opening {rules.opening}).")
    elif objective == "average":
        click.echo(f"Most points per turn over a long game: {data['average_turn']:.3f}"
                   + (f" (scoreless-turn rule: {rules.zero_turns.count} in a row cost {-int(rules.zero_turns.to)})"
                      if rules.zero_turns is not None and isinstance(rules.zero_turns.to, int) else "") + ".")
    else:
        click.echo(f"Fewest expected turns to reach {rules.goal} alone from 0: {data['race_turns_from_zero']:.2f}.")
    if not result.exact:
        click.echo("Not exact for this ruleset; assumptions:")
        for item in data["assumptions"]:
            click.echo(f"  - {item}")
