"""Who may talk to the server: the `Host` it answers to, and the `Origin` of requests that start work.

A page on another site can make the browser send requests to this server
(cross-site requests), and a name of its own that resolves to 127.0.0.1 can even
read the answers (DNS rebinding). So `Guard` answers only requests whose `Host`
is one of the server's own names (the bound address and the loopback names,
with the port), and refuses with 403 a request other than GET or HEAD whose
`Origin` is present and not one of those hosts (no `Origin`: a client that is
not a browser, such as curl, which a web page cannot be). Listening on every
interface (0.0.0.0, ::), the server's own names include the address each
connection was accepted on (the ASGI scope's `server`): the machine's network
address, whatever its host name resolves to (often a loopback address). Every answer forbids
being shown in a frame of another page (`FRAME_HEADERS`), so that no page can
lay its own buttons over the sheet's (clickjacking its Undo).
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from . import lan

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The names of this machine's loopback interface.
LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
#: Methods that neither change anything nor start work.
SAFE_METHODS = ("GET", "HEAD")
#: The headers of every answer that keep the page out of other pages' frames (old browsers read the first).
FRAME_HEADERS = ((b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"))


def _name(host: str) -> str:
    """`host` as it appears in a Host header: lower case, IPv6 in brackets, no trailing dot."""
    host = host.strip().lower().rstrip(".")
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def is_local(host: str) -> bool:
    """Whether `host` (a name or an address) is this machine's loopback interface."""
    if _name(host) in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _machine_names() -> set[str]:
    """This machine's host name and addresses (what other machines of the network call it): the host name's
    addresses, and the address of the interface that routes out (`lan`, found without sending anything)."""
    names = {socket.gethostname(), socket.getfqdn(), lan._routed() or ""}
    try:
        names |= {str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)}
    except OSError:
        pass
    return {_name(n) for n in names if n}


def _local_name(address: str) -> str:
    """The address a connection was accepted on, as a Host header names it (an IPv4-mapped IPv6 address as IPv4)."""
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return _name(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return _name(str(mapped or ip))


@dataclass(frozen=True)
class Access:
    """The Host header values the server answers to: `hosts` (name:port), or `names` on any port."""

    hosts: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    every_interface: int | None = None  # listening on 0.0.0.0 or ::, on this port: the accepting address is ours too

    @classmethod
    def local(cls) -> "Access":
        """The loopback names on any port (the app's default when it does not know where it listens)."""
        return cls(names=frozenset(LOOPBACK))

    @classmethod
    def bound(cls, host: str, port: int) -> "Access":
        """The address the server listens on and the loopback names, with `port`; a wildcard adds the machine's."""
        names = {_name(host), *LOOPBACK}
        if host in ("0.0.0.0", "::", ""):
            names |= _machine_names()
        hosts = {f"{n}:{port}" for n in names}
        if port == 80:
            hosts |= names
        wildcard = host in ("0.0.0.0", "::", "")
        return cls(hosts=frozenset(hosts), every_interface=port if wildcard else None)

    def host_ok(self, host: str, local: str | None = None) -> bool:
        """Whether a Host header (name[:port]) is one of the server's; `local` is the address the connection was
        accepted on (one of the server's names when it listens on every interface)."""
        host = host.strip().lower()
        if host in self.hosts:
            return True
        if self.every_interface is not None and local:
            mine, listening = _local_name(local), self.every_interface
            if host == f"{mine}:{listening}" or (listening == 80 and host == mine):
                return True
        name, sep, port = host.rpartition(":") if host.count(":") == 1 or "]:" in host else (host, "", "")
        return (not sep or port.isdigit()) and name.rstrip(".") in self.names

    def origin_ok(self, origin: str, local: str | None = None) -> bool:
        """Whether an Origin header is a page of this server (http://one-of-its-hosts)."""
        try:
            parts = urlsplit(origin.strip())
        except ValueError:
            return False
        return (parts.scheme == "http" and bool(parts.netloc) and not parts.path
                and self.host_ok(parts.netloc, local))


class Guard:
    """ASGI middleware: a request to a foreign Host, or work asked from a foreign Origin, is a 403 in JSON."""

    def __init__(self, app: Asgi, access: Access):
        self.app, self.access = app, access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
            host, origin = headers.get("host", ""), headers.get("origin")
            server = scope.get("server")
            local = str(server[0]) if server else None  # the address this connection was accepted on
            why = None
            if not self.access.host_ok(host, local):
                why = (f"this server does not answer to the host {json.dumps(host[:80])}", "Host")
            elif (origin is not None and scope["method"] not in SAFE_METHODS
                  and not self.access.origin_ok(origin, local)):
                why = (f"requests from the page {json.dumps(origin[:80])} are not accepted", "Origin")
            if why is not None:
                await _refuse(send, why[0], why[1])
                return

            async def framed(message: MutableMapping[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = [*message.get("headers", ()), *FRAME_HEADERS]
                await send(message)

            await self.app(scope, receive, framed)
            return
        await self.app(scope, receive, send)


async def _refuse(send: Send, message: str, field: str) -> None:
    body = json.dumps({"error": message, "field": field}).encode()
    await send({"type": "http.response.start", "status": 403,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *FRAME_HEADERS]})
    await send({"type": "http.response.body", "body": body})
