"""`cinqmille rules list|show`: the presets and the full resolved ruleset."""

from __future__ import annotations

import click

from ..rules import PRESET_NAMES, load_rules, preset_descriptions, to_dict, to_toml
from .common import emit_json, friendly_errors, json_option


@click.group("rules")
def command() -> None:
    """List the preset rulesets or show one in full."""


@command.command("list")
@json_option
@friendly_errors
def list_presets(as_json: bool) -> None:
    """Name and one-line description of each preset."""
    descriptions = preset_descriptions()
    if as_json:
        emit_json([{"name": name, "description": descriptions[name]} for name in PRESET_NAMES])
        return
    width = max(len(name) for name in PRESET_NAMES)
    for name in PRESET_NAMES:
        click.echo(f"{name:<{width}}  {descriptions[name]}")


@command.command("show")
@click.argument("spec", metavar="NAME|FILE")
@json_option
@friendly_errors
def show(spec: str, as_json: bool) -> None:
    """The full resolved ruleset as TOML (or JSON)."""
    rules = load_rules(spec)
    if as_json:
        emit_json(to_dict(rules))
    else:
        click.echo(to_toml(rules), nl=False)
