"""`cinqmille serve --lan`: the machine's address on the local network, and a QR code of the page's address.

`lan_address` finds the address without sending anything: `connect` on a UDP
socket only asks the system which interface would route to a documentation
address (TEST-NET-1, RFC 5737), no packet leaves; failing that, the address the
host name resolves to. A loopback answer is no answer (None). The QR code comes
from segno (pure Python, in the `web` extra): `qr_text` for the terminal,
`qr_svg` for the page.
"""

from __future__ import annotations

import io
import ipaddress
import socket
from typing import TYPE_CHECKING
import importlib.util

if TYPE_CHECKING:
    import segno

#: An address of the documentation range: a UDP `connect` to it picks the outgoing interface and sends nothing.
PROBE = "192.0.2.1"


def _usable(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.version == 4 and not (ip.is_loopback or ip.is_unspecified or ip.is_link_local or ip.is_multicast)


def _routed() -> str | None:
    """The address of the interface that would carry traffic out (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((PROBE, 9))
            return str(probe.getsockname()[0])
    except OSError:
        return None


def _named() -> str | None:
    """The address this machine's host name resolves to."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return None


def lan_address() -> str | None:
    """This machine's IPv4 address on the local network, or None when it has none (loopback only)."""
    for find in (_routed, _named):
        address = find()
        if address is not None and _usable(address):
            return address
    return None


def _code(url: str) -> segno.QRCode:
    import segno  # lazy: optional dependency (extra 'web')

    return segno.make(url, error="m", micro=False)


def qr_text(url: str) -> str:
    """The QR code of `url` in block characters, two rows to a line, for a terminal."""
    out = io.StringIO()
    _code(url).terminal(out=out, compact=True, border=2)
    return out.getvalue()


def qr_svg(url: str) -> str:
    """The QR code of `url` as an SVG document (black on white, with a title naming the address)."""
    out = io.BytesIO()
    _code(url).save(out, kind="svg", scale=5, border=2, xmldecl=False, svgns=True, title=url)
    return out.getvalue().decode()


def qr_available() -> bool:
    """Whether segno (the QR encoder of the `web` extra) is installed."""
    return importlib.util.find_spec("segno") is not None
