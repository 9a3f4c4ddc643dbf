"""The text answer of `cinqmille advise` (and of `play`'s hints): the position, the ranked options with their
figures, the sentence, and the notes when the figures are not exact."""

from __future__ import annotations

from .advice import Advice, Choice, Figure, figure_words
from ..rules import Rules
from ..words import dice_words, faces_words, pct, plain_assumption


def notes_text(exact: bool, assumptions: tuple[str, ...], verbose: bool = False,
               figure: Figure | None = None) -> list[str]:
    """The note under an answer when the figures are not exact: how they were obtained (`figure`), then the
    solver's assumptions in a player's words, or technical (`verbose`)."""
    if exact:
        return []
    head = [] if figure is None or figure.kind in ("exact", "relaxed") else \
        [f"{'these chances are ' if figure.kind != 'none' else ''}{figure_words(figure)}."]
    if verbose:
        return [*(f"Note: {h}" for h in head), "Note: this ruleset is not solved exactly; the solver assumes:",
                *(f"  - {a}" for a in assumptions)]
    plain = [plain_assumption(a) for a in assumptions]
    if len(plain) == 1 and not head:
        return [f"Note: {plain[0]} (--verbose says how)."]
    return [*(f"Note: {h}" for h in head), "Note (--verbose says how):", *(f"  - {a}" for a in plain)]


def render_text(advice: Advice, verbose: bool = False) -> list[str]:
    """The human answer of `cinqmille advise`: the position, the ranked options, the sentence, notes (in a
    player's words; the solver's technical assumptions with `verbose`)."""
    rules, pos = advice.rules, advice.position
    setaside = f"{pos.turn} set aside" if pos.turn else "nothing set aside"
    opponent = f"opponent {_score(rules, pos.opp)}" if pos.others is None else \
        "opponents " + ", ".join(_score(rules, o) for o in pos.others)
    if pos.target is not None:
        opponent = f"your last turn against {pos.target}"
    elif rules.last_round:
        opponent += ", you open the round" if pos.seat == 0 else ", you play second in the round"
    head = f"Rules '{rules.name}': you {_score(rules, pos.me)}, {opponent}, {setaside}, "
    lines = []
    if pos.offer is not None:
        lines.append(f"Rules '{rules.name}': you {_score(rules, pos.me)}, {opponent}; the opponent banked "
                     f"{pos.offer[0]} with {dice_words(pos.offer[1])} in hand: take it over?")
        labels = {"take_over": f"take over {pos.offer[0]}", "start": "start afresh"}
        width = max(len(v) for v in labels.values())
        lines.append(f"  {'move':<{width}}  {_HEAD}")
        for o in advice.options:
            lines.append(f"  {labels[o.action or '']:<{width}}  {_figures(o, _is_best(advice, o))}")
    elif advice.roll is None:
        lines.append(head + f"{dice_words(pos.hand(rules))} in hand.")
        rows = [(f"{o.action} {pos.turn}" if o.action == "bank"
                 else f"announce {o.points}, roll" if o.action == "predict"
                 else f"roll {dice_words(pos.hand(rules))}", o) for o in advice.options]
        width = max(len(r[0]) for r in rows)
        lines.append(f"  {'move':<{width}}  {_HEAD}")
        for label, o in rows:
            lines.append(f"  {label:<{width}}  {_figures(o, _is_best(advice, o))}")
    else:
        lines.append(head + f"rolled {faces_words(advice.roll)}.")
        if advice.options:
            keep_rows: list[tuple[str, str, str, Choice]] = []
            for o in advice.options:
                then = {"win": "wins at once", "bust": "past the goal: bust"}.get(o.then or "", "")
                if o.then == "bank":
                    then = f"bank {o.turn}"
                elif o.then == "roll":
                    full = o.dice == rules.dice and len(o.keep or ()) == len(advice.roll)
                    then = f"roll {dice_words(o.dice or 0, full)} (turn {o.turn})"
                keep_rows.append(("-".join(map(str, o.keep or ())), str(o.points), then, o))
            wk = max(4, max(len(r[0]) for r in keep_rows))
            wt = max(4, max(len(r[2]) for r in keep_rows))
            lines.append(f"  {'keep':<{wk}}  {'points':>6}  {'then':<{wt}}  {_HEAD}")
            for keep, points, then, o in keep_rows:
                lines.append(f"  {keep:<{wk}}  {points:>6}  {then:<{wt}}  {_figures(o, _is_best(advice, o))}")
    lines.append(advice.sentence)
    lines.extend(notes_text(advice.exact, advice.assumptions, verbose, advice.figure))
    return lines


def _score(rules: Rules, score: int) -> str:
    return f"{score} (not opened)" if score == 0 and rules.opening else str(score)


_HEAD = f"{'win':>8}  {'expected':>8}  {'bust':>7}  vs best"


def _is_best(advice: Advice, o: Choice) -> bool:
    """The best option, or one the table ties with it (estimates: only the first, their gaps being noise)."""
    return o is advice.options[0] or (o.loss == 0 and advice.figure.kind != "estimated")


def _figures(o: Choice, first: bool) -> str:
    """The columns win, expected (points banked), bust (next roll) and vs best of one option (`first`: the best)."""
    bust = "-" if o.bust is None else pct(o.bust, 1)
    win = "?" if o.win != o.win else pct(o.win, 2)
    loss = "?" if o.loss != o.loss else "best" if first else f"-{100 * o.loss:.2f} points"
    return f"{win:>8}  {o.expected:>8.1f}  {bust:>7}  {loss}"
