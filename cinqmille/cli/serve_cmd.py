"""`cinqmille serve`: the score sheet in the browser, with live advice (a local web app)."""

from __future__ import annotations

import importlib.util
import socket

import click

from ..errors import CinqmilleError
from ..parsing import whole
from ..solver.n_player import MAX_PLAYERS
from ..words import number_word
from .common import fail, friendly_errors, resolve_rules, rules_option

#: The one line printed when the web extra is missing.
MISSING_EXTRA = "cinqmille serve needs the web extra: pip install 'cinqmille[web]'"
#: The environment variable that bounds the table cache (MB), when --cache-max-mb is not given.
CACHE_MAX_ENV = "CINQMILLE_CACHE_MAX_MB"
#: The bound of the table cache on disk (MB) when neither says.
CACHE_MAX_MB = 1024
#: The address listened on when neither --host nor --lan is given: this machine only.
DEFAULT_HOST = "127.0.0.1"


def web_available() -> bool:
    """Whether the web extra (Starlette and uvicorn) is installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("starlette", "uvicorn"))


@click.command("serve")
@rules_option
@click.option("--host", default=None,
              help="Address to listen on (127.0.0.1: this machine only; 0.0.0.0: the whole network) "
                   "[default: 127.0.0.1].")
@click.option("--lan", is_flag=True,
              help="Listen on this machine's local network address and print it with a QR code, for the phones "
                   "around the table.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--cache-max-mb", type=click.IntRange(1, 10**7), default=None, envvar=CACHE_MAX_ENV,
              show_envvar=True,
              help=f"Bound of the solved-table cache on disk, in MB: the oldest tables are deleted beyond it "
                   f"[default: {CACHE_MAX_MB}].")
@click.option("--max-queued", type=click.IntRange(1, 100), default=None,
              help="Solves queued or running at most (a 429 answer beyond) [default: 4].")
@click.option("--prepare", "prepare_spec", multiple=True, metavar="N[,N...]",
              help=f"Solve the tables of these numbers of players (2 to {MAX_PLAYERS}) of --rules in the background "
                   "now, within the limits of `cinqmille solve` (--prepare 4: the four-player table, 12.2 billion "
                   "turn states for standard); the page says when each is ready. An interrupted solve resumes.")
@friendly_errors
def command(rules_spec: str, host: str | None, lan: bool, port: int, cache_max_mb: int | None,
            max_queued: int | None, prepare_spec: tuple[str, ...]) -> None:
    """Start the score sheet in the browser, with live advice; Ctrl-C stops it.

    The page keeps each game in the browser; the sheet applies the ruleset's
    rules and the advice reads the same solved tables as `cinqmille advise`.
    """
    if not web_available():
        fail(MISSING_EXTRA)
    import uvicorn  # lazy: optional dependency (extra 'web')

    from ..solver.api import is_cached  # lazy: start-up time (not for --help)
    from ..solver.budget import SOLVE_STATES, Limits, check_budget  # lazy: start-up time (not for --help)
    from ..web import serving  # lazy: start-up time (not for --help)
    from ..web.access import Access, is_local  # lazy: start-up time (not for --help)
    from ..web.app import create_app  # lazy: start-up time (not for --help)
    from ..web.lan import lan_address, qr_available, qr_text  # lazy: start-up time (not for --help)
    from ..web.tables import MAX_QUEUED, Tables  # lazy: start-up time (not for --help)

    if lan and host is not None:
        fail("--lan picks the address itself: give --lan or --host, not both")
    if lan and not qr_available():
        fail(MISSING_EXTRA)
    rules = resolve_rules(rules_spec)
    counts = player_counts(prepare_spec)
    limits = Limits.from_env(default_states=SOLVE_STATES)
    sizes = {n: None if is_cached(rules, n) else check_budget(rules, "win", limits, n).states for n in counts}
    address = lan_address() if lan else None
    if lan and address is None:
        click.echo("No local network address found: listening on 0.0.0.0 (every interface); open the page at "
                   "this machine's address.", err=True)
    host = address or ("0.0.0.0" if lan else host or DEFAULT_HOST)
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    share = f"http://{address}:{bound}/" if address is not None else None
    tables = Tables(max_queued=max_queued or MAX_QUEUED, cache_max_bytes=(cache_max_mb or CACHE_MAX_MB) * 2**20)
    for n, states in sizes.items():
        tables.prepare(rules, n, limits)
        click.echo(f"Preparing the {number_word(n)}-player table of '{rules.name}' in the background: "
                   + ("cached, read now" if states is None else f"{states:,} turn states to solve")
                   + " (the page says when it is ready)")
    app = create_app(rules, tables, Access.bound(host, bound), share_url=share)
    server = uvicorn.Server(serving.config(app, log_level="warning", timeout_graceful_shutdown=2))
    if not is_local(str(sock.getsockname()[0])):
        click.echo(f"Warning: listening on {host}, not this machine only: anyone who can reach it may use the sheet "
                   "and start solves (there is no log-in)", err=True)
    click.echo(f"cinqmille serve: the score sheet of '{rules.name}' at http://{shown}:{bound}/ (Ctrl-C to stop)")
    if share is not None:
        click.echo(f"On the phones around the table, open {share} or scan:")
        click.echo(qr_text(share), nl=False)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn shut down cleanly, then passed Ctrl-C on
        pass
    finally:
        sock.close()
    click.echo("Stopped.")


def player_counts(specs: tuple[str, ...]) -> tuple[int, ...]:
    """The numbers of players of `--prepare` (each option a number or a list such as 3,4), in order, once each."""
    counts: list[int] = []
    for spec in specs:
        for part in spec.split(","):
            try:
                n = whole(part.strip(), "--prepare", low=2, high=MAX_PLAYERS)
            except CinqmilleError as exc:
                fail(str(exc))
            if n not in counts:
                counts.append(n)
    return tuple(counts)


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port` (0: a free port), or one line saying why not and exit status 2."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except (OSError, UnicodeError) as exc:
        why = str(getattr(exc, "strerror", None) or exc).split(" (while")[0]
        fail(f"cannot listen on {host}:{port} ({why})")
        raise  # not reached: fail exits
