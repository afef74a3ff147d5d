"""The web app of ``whist serve`` (Starlette): the table's pages, their assets and one
websocket per browser of a human seat.

Routes:

* ``GET /``: the seats and the links of the human seats;
* ``GET /seat/{agent}``: the page of a human seat (``assets/table.html``);
* ``GET /assets/{name}``: the page's style sheets and scripts (``replay.css`` and ``replay.js``,
  the replay page's drawing, from ``training/viewers/assets``; ``table.css`` and ``table.js``
  from this package's ``assets``), and nothing else;
* ``WS /ws/{agent}``: the seat's messages (:mod:`training.viewers.serve.host`).

Security: with a ``token`` every request must carry it (``?token=...``, compared in constant
time); without it the answer is HTTP 403, for the websocket too (closed before it is
accepted). A websocket opened from a page of another origin (its ``Origin`` header names
another host than its ``Host``) is refused the same way, so that a web page elsewhere cannot
read a seat's cards through the browser. Pages are sent with a content security policy that
allows this server's own scripts and connections only, no framing and no referrer.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import secrets
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from training.viewers.serve.host import TableHost

#: Assets the pages load: name -> (package, content type).
ASSETS = {
    "replay.css": ("training.viewers", "text/css; charset=utf-8"),
    "replay.js": ("training.viewers", "text/javascript; charset=utf-8"),
    "table.css": ("training.viewers.serve", "text/css; charset=utf-8"),
    "table.js": ("training.viewers.serve", "text/javascript; charset=utf-8"),
}
#: Headers of every page and asset.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; "
                               "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
FORBIDDEN = "403 Forbidden: this table needs its token (it is in the links printed when the server started)"


def asset_text(name: str) -> str:
    """The text of the page asset ``name`` (a key of :data:`ASSETS`); ``KeyError`` otherwise."""
    package, _ = ASSETS[name]
    return resources.files(package).joinpath("assets", name).read_text(encoding="utf-8")


def _template() -> str:
    return resources.files("training.viewers.serve").joinpath("assets", "table.html").read_text(encoding="utf-8")


def _same_origin(scope: Scope) -> bool:
    """Whether a websocket's ``Origin`` header, if any, names the host it was opened on."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    origin = headers.get("origin")
    if origin is None:
        return True  # not a browser page (a script, the tests' client)
    return urlsplit(origin).netloc.lower() == headers.get("host", "").lower()


class TokenGate:
    """ASGI middleware: every HTTP and websocket request must carry ``?token=<token>`` (module
    docstring); ``token=None`` lets every request through. Websockets from another origin are
    refused whatever the token."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    def allowed(self, scope: Scope) -> bool:
        """Whether the request of ``scope`` carries the token (always, without one)."""
        if self.token is None:
            return True
        given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])[0]
        return secrets.compare_digest(given.encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.allowed(scope):
            await PlainTextResponse(FORBIDDEN, status_code=403, headers=SECURITY_HEADERS)(scope, receive, send)
            return
        if scope["type"] == "websocket" and not (self.allowed(scope) and _same_origin(scope)):
            await deny(WebSocket(scope, receive, send))
            return
        await self.app(scope, receive, send)


async def deny(websocket: WebSocket) -> None:
    """Refuse a websocket before accepting it: an HTTP 403 answer where the server can send one,
    else a close (which uvicorn answers with HTTP 403)."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(PlainTextResponse(FORBIDDEN, status_code=403))
    else:
        await websocket.close(code=1008)


def create_app(host: TableHost, token: str | None = None) -> ASGIApp:
    """The ASGI app of ``host``'s table (module docstring).

    Args:
        host: the table host; its :meth:`~TableHost.run` task starts with the app (lifespan)
            and stops with it, then :meth:`~TableHost.close` writes an unfinished game's
            completed hands.
        token: the token every request must carry, or ``None`` (a server bound to the
            loopback interface only).
    Returns:
        the app (Starlette, inside :class:`TokenGate`).
    """
    table = host.table
    query = "" if token is None else "?token=" + quote(token)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        task = asyncio.get_running_loop().create_task(host.run())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await host.close()

    async def index(request: Request) -> Response:
        rows = []
        for a in table.agents:
            if table.is_human(a):
                link = f'<a href="/seat/{html.escape(a)}{html.escape(query)}">{html.escape(a)}</a>'
                rows.append(f"<li>{link}: a person{' (connected)' if host.subscribers[a] else ''}</li>")
            else:
                rows.append(f"<li>{html.escape(a)}: {html.escape(table.specs[a])}</li>")
        title = f"{table.game.replace('_', ' ').title()} · whist serve"
        page = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title><link rel="icon" href="data:,">'
                f'<link rel="stylesheet" href="/assets/replay.css{html.escape(query)}"></head><body><header><h1>{html.escape(title)}</h1>'
                f'<div id="subtitle">game {table.game_number + 1}, step {table.step}; open the link of your seat</div></header>'
                f'<main><div class="box"><ul id="seats">{"".join(rows)}</ul></div></main></body></html>')
        return HTMLResponse(page, headers=SECURITY_HEADERS)

    async def seat_page(request: Request) -> Response:
        agent = request.path_params["agent"]
        if not table.is_human(agent):
            return PlainTextResponse(f"404: {agent} is not a human seat; human seats: {', '.join(table.humans)}", status_code=404,
                                     headers=SECURITY_HEADERS)
        title = f"{table.game.replace('_', ' ').title()} · {agent}"
        page = (_template().replace("__TITLE__", html.escape(title)).replace("__SEAT__", html.escape(agent))
                .replace("__TOKEN__", html.escape(token or "")).replace("__QUERY__", html.escape(query)))
        return HTMLResponse(page, headers=SECURITY_HEADERS)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return PlainTextResponse("404: no such asset", status_code=404, headers=SECURITY_HEADERS)
        return Response(asset_text(name), media_type=ASSETS[name][1], headers=SECURITY_HEADERS)

    async def seat_socket(websocket: WebSocket) -> None:
        agent = websocket.path_params["agent"]
        if not table.is_human(agent):
            await deny(websocket)
            return
        await websocket.accept()
        sub = host.subscribe(agent)

        async def pump() -> None:
            while True:
                message = await sub.queue.get()
                await websocket.send_text(json.dumps(message, separators=(",", ":")))

        sender = asyncio.get_running_loop().create_task(pump())
        try:
            while True:
                message: dict[str, Any] = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if text is None:
                    host.send(agent, {"type": "error", "message": "messages are JSON text, not binary"}, only=sub)
                    continue
                host.receive(sub, text)
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender
            host.unsubscribe(sub)

    app = Starlette(routes=[
        Route("/", index),
        Route("/seat/{agent}", seat_page),
        Route("/assets/{name}", asset),
        WebSocketRoute("/ws/{agent}", seat_socket),
    ], lifespan=lifespan)
    return TokenGate(app, token)


__all__ = ["ASSETS", "TokenGate", "asset_text", "create_app", "deny"]
