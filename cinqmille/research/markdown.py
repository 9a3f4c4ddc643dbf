"""Markdown for the results pages: a table from its rows of cells."""

from __future__ import annotations


def table(cells: list[list[str]]) -> list[str]:
    """The lines of a Markdown table whose first row is its header."""
    out = ["| " + " | ".join(cells[0]) + " |", "|" + "|".join("---" for _ in cells[0]) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in cells[1:]]
    return out
