"""`cinqmille export`: the optimal policy of a ruleset as CSV, npz or parquet: the bank/roll table and the keep table."""

from __future__ import annotations

import math
import time
from pathlib import Path

import click

from ..solver.n_player import MAX_PLAYERS
from .common import friendly_errors, resolve_rules, rules_option


@click.command("export")
@rules_option
@click.option("--format", "fmt", type=click.Choice(["csv", "npz", "parquet"]),
              help="File format (default: from the file name's suffix).")
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The file to write (replaced atomically); CSV and parquet put the keep table beside it "
                   "(policy.csv -> policy.keeps.csv).")
@click.option("--me", "me", metavar="POINTS|LO:HI", help="Only these scores of the player to move (default: all).")
@click.option("--opp", "opp", metavar="POINTS|LO:HI", help="Only these opponent scores (default: all).")
@click.option("--opp2", "opp2", metavar="POINTS|LO:HI",
              help="With --players 3 or more: only these scores of the player after the next (default: all).")
@click.option("--opp3", "opp3", metavar="POINTS|LO:HI",
              help="With --players 4 or more: only these scores of the fourth player (default: all).")
@click.option("--opp4", "opp4", metavar="POINTS|LO:HI",
              help="With --players 5: only these scores of the fifth player (default: all).")
@click.option("--players", "players", type=click.IntRange(2, MAX_PLAYERS), default=2, show_default=True,
              help=f"The table exported: two players, or three to {MAX_PLAYERS} (columns me, opp, opp2, ...: the "
                   "opponents in playing order).")
@click.option("--keeps/--no-keeps", "keeps", default=True, show_default=True,
              help="Also write the keep table: the best keep of every roll where the best move is to roll "
                   "(about 48 times the rows of the bank/roll table).")
@click.option("--all-keeps", "every", is_flag=True,
              help="The keep table lists every legal keep of each roll, best first, with its rank, chance to win and "
                   "expected points (about 3 times the rows of the best keeps; more than 25 million rows are "
                   "refused: export a slice).")
@click.option("--roll-chances", "chances", is_flag=True,
              help="The keep table gives each roll's chance (column chance: the probability of rolling it with the "
                   "dice in hand), with one row more per state for the rolls that score nothing (rolled 0, then "
                   "bust): a state's chances sum to 1.")
@friendly_errors
def command(rules_spec: str, fmt: str | None, output: Path, me: str | None, opp: str | None, opp2: str | None,
            opp3: str | None, opp4: str | None, players: int, keeps: bool, every: bool, chances: bool) -> None:
    """Write the optimal policy: scores, turn points, dice, best action and chances to win by banking and rolling, and the best keep of every roll."""
    from ..errors import CinqmilleError  # lazy: start-up time (not for --help)
    # lazy: start-up time (not for --help)
    from ..app.export import (
        EXPORT_COST,
        EXPORT_COST_NO_KEEPS,
        check_every_rows,
        check_targets,
        format_of,
        keep_rows,
        meta_of,
        need_pyarrow,
        parse_scores,
        policy_rows,
        reachable,
        seat_tables,
        write_policy,
    )
    from ..files import check_folder  # lazy: start-up time (not for --help)
    from ..rules.bank import UNIT  # lazy: start-up time (not for --help)
    from .advise_cmd import load_win_table  # lazy: start-up time (not for --help)
    from .progress import progress_bar  # lazy: start-up time (not for --help)

    rules = resolve_rules(rules_spec)
    if not output.name or output.name in (".", ".."):
        raise CinqmilleError(f"-o: give the name of a file to write, got {str(output)!r}")
    fmt = format_of(output, fmt)
    if fmt == "parquet":
        need_pyarrow()
    given = {"--opp2": opp2, "--opp3": opp3, "--opp4": opp4}
    for i in range(2, MAX_PLAYERS):
        if given[f"--opp{i}"] is not None and players <= i:
            raise CinqmilleError(f"--opp{i} is for --players {i + 1} or more")
    if every and not keeps:
        raise CinqmilleError("--all-keeps lists the keep table: it cannot go with --no-keeps")
    if chances and not keeps:
        raise CinqmilleError("--roll-chances is a column of the keep table: it cannot go with --no-keeps")
    mes, opps = parse_scores(me, rules, "--me"), parse_scores(opp, rules, "--opp")
    rest = [parse_scores(given[f"--opp{i}"], rules, f"--opp{i}") for i in range(2, players)]
    check_targets(output, fmt, keeps)  # a device, a FIFO or a directory in the way: refused before the work
    check_folder(output)  # and a folder that cannot be written
    count = len(mes) * len(opps) * math.prod(len(x) for x in rest)
    if every:  # a table past the row limit: refused before the solve
        check_every_rows(rules, count, ", ".join(["--me", "--opp"] + [f"--opp{i}" for i in range(2, players)]))
    result = load_win_table(rules, players)
    start = time.perf_counter()
    share = 0.3 if keeps else 1.0
    what = {2: "score pair", 3: "score triple"}.get(players, "score tuple") + ("" if count == 1 else "s")
    size = count * int(reachable(rules, rules.goal // UNIT).sum()) * (EXPORT_COST if keeps else EXPORT_COST_NO_KEEPS)
    with progress_bar(f"Exporting {count:,} {what}", size) as update:
        if players > 2:
            cols, kept = seat_tables(result, mes, [opps] + rest, keeps, progress=update, every=every,
                                      chances=chances)
        else:
            cols = policy_rows(result, mes, opps, progress=lambda f: update(share * f))
            kept = keep_rows(result, cols, progress=lambda f: update(share + (1 - share) * f),
                             every=every, chances=chances) if keeps else None
    files = write_policy(output, fmt, cols, meta_of(result), kept)
    seconds = time.perf_counter() - start
    size = sum(f.stat().st_size for f in files)
    rows = f"{len(cols['me']):,} rows"
    if kept is not None:
        rows += f" and {len(kept['me']):,} keep rows{' (every legal keep)' if every else ''}"
    click.echo(f"Wrote {rows} ({count:,} {what}) of '{rules.name}' "
               f"to {output}{''.join(f', {f.name}' for f in files[1:])} "
               f"({fmt}, {size / 1e6:.1f} MB) in {seconds:.1f} s.")
    if not result.exact:
        click.echo("Note: this ruleset is not solved exactly; the solver assumes: " + "; ".join(result.assumptions))
