"""The score sheet in the browser, with live advice (`cinqmille serve`).

`create_app()` is the Starlette app (`app`), `tables` keeps the solved tables
(solved in a background thread), `bodies` is the schema of what clients may
send (and reads it), `openapi` writes the API's document from it, `access`
says who may ask (Host and Origin), and `static/` holds the page (plain HTML,
JavaScript and CSS, no build step).
Needs the `web` extra: ``pip install 'cinqmille[web]'``.
"""

from __future__ import annotations

__all__ = ["create_app"]


def __getattr__(name: str) -> object:
    if name == "create_app":
        from .app import create_app  # lazy: optional dependency (extra 'web')

        return create_app
    raise AttributeError(name)
