"""How `cinqmille serve` runs the app under uvicorn: connections that send nothing are closed, bursts are queued.

uvicorn closes an idle connection after a response (`timeout_keep_alive`) but
has no time limit on a request's head: a connection that sends nothing, or
half its headers, stays open for ever. With a cap on connections
(`limit_concurrency`, which answers 503 beyond it) a few dozen such sockets
lock every client out; without a time limit they pile up. So:

- `TimedH11Protocol` closes a connection whose request head (the request
  line and headers) is not complete `HEAD_TIMEOUT` seconds after it opened, or
  after its previous answer; a body must then arrive within `bodies.BODY_TIMEOUT`
  (a 408, `bodies.read_body`).
- There is no cap on connections that refuses: a burst of real requests is
  queued, by the app (its work runs in a few worker threads, the rest wait
  their turn) and, beyond the process's file limit, by the system's listen
  backlog, never answered 503.
"""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a connection has to send a whole request head (from its opening, or from its previous answer).
HEAD_TIMEOUT = 10.0
#: Seconds an idle connection stays open after an answer (uvicorn's keep-alive).
KEEP_ALIVE = 5


class TimedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a time limit on each request head (`HEAD_TIMEOUT`)."""

    head_timeout = HEAD_TIMEOUT
    _head_timer: asyncio.TimerHandle | None = None

    # uvicorn's `H11Protocol.connection_made` takes an `asyncio.Transport`, narrower than asyncio's `BaseProtocol`
    # (`BaseTransport`), itself under an ignore of `override`: this override keeps uvicorn's signature.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        if self.transport is not None and not self.transport.is_closing():
            self._head_timer = self.loop.call_later(self.head_timeout, self._head_expired)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_expired(self) -> None:
        """No whole request head since the timer started: close (a request being answered is left alone; its
        answer starts the timer again)."""
        self._head_timer = None
        if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
            self.transport.close()


def config(app: Any, **options: Any) -> uvicorn.Config:
    """The uvicorn configuration of `cinqmille serve` for `app` (`options` passed on: log level, shutdown time)."""
    return uvicorn.Config(app, http=TimedH11Protocol, timeout_keep_alive=KEEP_ALIVE, limit_concurrency=None,
                          **options)
