"""`cinqmille serve --lan`: the local network address (found without sending anything), the QR code, the checks.

No test sends traffic to an address other than the loopback one: the address
picking is tested with stand-ins for the socket and the resolver, and the
command with the address monkeypatched to 127.0.0.1 and uvicorn not started.
"""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'cinqmille[web]'")
segno = pytest.importorskip("segno", reason="the web extra is not installed: pip install 'cinqmille[web]'")

import uvicorn  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from cinqmille.cli import main  # noqa: E402
from cinqmille.web import lan  # noqa: E402
from cinqmille.web.access import Access  # noqa: E402
from cinqmille.web.app import create_app  # noqa: E402

BLOCKS = set("█▀▄ ")


class FakeUdp:
    """A UDP socket that records what is done with it and sends nothing."""

    calls: list[str] = []

    def __init__(self, *args: Any) -> None:
        FakeUdp.calls.append(f"socket{args}")

    def __enter__(self) -> "FakeUdp":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def connect(self, address: tuple[str, int]) -> None:
        FakeUdp.calls.append(f"connect {address[0]}")

    def getsockname(self) -> tuple[str, int]:
        return ("192.168.1.20", 54321)

    def send(self, *args: Any) -> None:  # pragma: no cover - must not be called
        raise AssertionError("the address probe sent a packet")

    sendto = send


def test_the_address_is_the_routed_interface_found_without_sending(monkeypatch: pytest.MonkeyPatch) -> None:
    """A UDP `connect` to the documentation address 192.0.2.1 names the interface; nothing is sent."""
    FakeUdp.calls = []
    monkeypatch.setattr(lan.socket, "socket", FakeUdp)
    assert lan.lan_address() == "192.168.1.20"
    assert FakeUdp.calls[-1] == "connect 192.0.2.1"


@pytest.mark.parametrize(("routed", "named", "expected"), [
    ("192.168.1.20", "10.0.0.5", "192.168.1.20"),
    (None, "10.0.0.5", "10.0.0.5"),          # no route out: the host name's address
    ("127.0.1.1", "10.0.0.5", "10.0.0.5"),   # a loopback answer is no answer
    ("127.0.0.1", "127.0.1.1", None),        # loopback only: none
    ("169.254.3.4", None, None),             # a link-local address is not one a phone reaches
])
def test_the_address_falls_back_to_the_host_name_then_to_none(routed: str | None, named: str | None,
                                                               expected: str | None,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The routed address first, else the host name's, never a loopback or link-local one."""
    monkeypatch.setattr(lan, "_routed", lambda: routed)
    monkeypatch.setattr(lan, "_named", lambda: named)
    assert lan.lan_address() == expected


def test_the_qr_code_of_the_terminal_is_the_encoders_matrix() -> None:
    """The terminal QR code is block characters, two matrix rows a line, as wide as segno's symbol with its border."""
    url = "http://192.168.1.20:8000/"
    width, height = segno.make(url, error="m", micro=False).symbol_size(border=2)
    lines = lan.qr_text(url).rstrip("\n").split("\n")
    assert len(lines) == (height + 1) // 2
    assert all(len(line) == width and set(line) <= BLOCKS for line in lines)
    assert lan.qr_svg(url).lstrip().startswith("<svg") and url in lan.qr_svg(url)


def serve(monkeypatch: pytest.MonkeyPatch, address: str | None, *args: str) -> tuple[Any, dict[str, Any]]:
    """`serve --lan` with the address found monkeypatched and uvicorn not started; the app it would serve."""
    seen: dict[str, Any] = {}
    monkeypatch.setattr(lan, "lan_address", lambda: address)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: seen.update(app=self.config.app,
                                                                                     sock=sockets[0].getsockname()))
    return CliRunner().invoke(main, ["serve", "--lan", "--port", "0", *args]), seen


def test_serve_lan_prints_the_address_and_its_qr_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve --lan` listens on the address found, prints it to open and its QR code, and the page's /api/join
    gives the same address with its SVG."""
    out, seen = serve(monkeypatch, "127.0.0.1")
    assert out.exit_code == 0, out.output
    host, port = seen["sock"][:2]
    url = f"http://127.0.0.1:{port}/"
    assert host == "127.0.0.1"
    assert f"On the phones around the table, open {url} or scan:" in out.stdout
    qr = [line for line in out.stdout.splitlines() if line and set(line) <= BLOCKS and "█" in line]
    assert len(qr) > 10 and len({len(line) for line in qr}) == 1
    join = TestClient(seen["app"], base_url=f"http://127.0.0.1:{port}").get("/api/join").json()
    assert join["url"] == url and join["svg"].lstrip().startswith("<svg")


def test_serve_lan_without_an_address_listens_everywhere_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """No local network address: a one-line message, 0.0.0.0, and no QR code of an address that is not known."""
    out, seen = serve(monkeypatch, None)
    assert out.exit_code == 0, out.output
    assert seen["sock"][0] == "0.0.0.0"
    assert "No local network address found: listening on 0.0.0.0" in out.stderr
    assert "scan" not in out.stdout


def test_serve_lan_and_host_together_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--lan` with `--host` is one line and exit status 2."""
    out, _ = serve(monkeypatch, "127.0.0.1", "--host", "127.0.0.1")
    assert out.exit_code == 2
    assert out.output == "Error: --lan picks the address itself: give --lan or --host, not both\n"


def test_the_lan_address_passes_the_host_and_origin_checks() -> None:
    """Bound to a network address, the server answers that address and the page served from it, no other."""
    app = create_app(access=Access.bound("192.168.1.20", 8000), share_url="http://192.168.1.20:8000/")
    client = TestClient(app, base_url="http://192.168.1.20:8000")
    assert client.get("/api/join").json()["url"] == "http://192.168.1.20:8000/"
    body = {"rules": "standard"}
    assert client.post("/api/rules", json=body, headers={"Origin": "http://192.168.1.20:8000"}).status_code == 200
    assert client.post("/api/rules", json=body, headers={"Origin": "http://evil.example"}).status_code == 403
    other = TestClient(app, base_url="http://192.168.1.21:8000")
    assert other.get("/api/rules").status_code == 403


def test_join_is_empty_without_lan() -> None:
    """Served on loopback, /api/join says there is no address to share (the page then hides its card)."""
    assert TestClient(create_app(), base_url="http://127.0.0.1:8000").get("/api/join").json() == \
        {"url": None, "svg": None}
