"""`cinqmille match A B`: the exact chances of one policy against another, in each seat (two players)."""

from __future__ import annotations

import click

from .common import emit_json, friendly_errors, json_option, resolve_rules, rules_option


@click.command("match")
@rules_option
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@json_option
@friendly_errors
def command(rules_spec: str, a: str, b: str, as_json: bool) -> None:
    """The exact chance of policy A against policy B, A moving first and second, by the game's Markov chain.

    A and B: optimal (or bot), expected, threshold:T, threshold:T/K, cautious, card (the card found for
    standard), card:L1/L2/.../LD (bank lines by dice in hand, the most points set aside) or
    card:L1/.../LD:few:DIE. Two players, no last round, take-over or counted scoreless turns.
    """
    from ..research.match import match  # lazy: start-up time (not for --help)

    result = match(resolve_rules(rules_spec), a, b)
    if as_json:
        emit_json(result.as_dict())
        return
    for line in result.sentences():
        click.echo(line)
