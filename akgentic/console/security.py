"""The console's access rules: the token, the Host and Origin checks.

- A token is always required, on loopback too (other local users and sandboxed
  code with network access can reach a loopback port): the one given
  (``--token`` or ``$AKGENTIC_CONSOLE_TOKEN``), else a generated one that
  ``serve`` prints inside the URL to open.
- Every request (page, static files, API, stream) must carry it: either
  ``Authorization: Bearer <token>`` or the cookie (HttpOnly, SameSite=Strict)
  the console sets when the page is opened as ``/?token=<token>``. The query
  parameter is accepted on that page only, which answers with the cookie and a
  redirect to ``/`` so the token leaves the address bar.
- A request whose ``Origin`` is another site is refused when it changes state
  (the console's own origin, or the public origin given with ``--origin`` when a
  reverse proxy serves it under another name), and on loopback the ``Host`` must
  be a loopback name (no DNS rebinding).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "COOKIE_NAME",
    "MIN_TOKEN_LENGTH",
    "SECURITY_HEADERS",
    "TOKEN_ENV_VAR",
    "AccessGuard",
    "check_token",
    "is_loopback",
    "new_token",
    "resolve_token",
]

TOKEN_ENV_VAR = "AKGENTIC_CONSOLE_TOKEN"
COOKIE_NAME = "akgentic_console_token"
#: Sent with every response: no inline script, no framing, no sniffing, no caching.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
)
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) only accepts local connections."""
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


#: What a token may hold: it travels in a header, a cookie and a URL unquoted.
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~+/=-]+")
#: Shortest token ``serve`` accepts (a generated one has 32 characters).
MIN_TOKEN_LENGTH = 16


def check_token(token: str) -> str:
    """``token`` when it is usable in a header, a cookie and a URL; else ValueError."""
    if not token.strip():
        raise ValueError("the console token must not be empty")
    if not _TOKEN_CHARS.fullmatch(token):
        raise ValueError(
            "the console token may hold only letters, digits and the characters . _ ~ + / = -"
        )
    return token


def new_token() -> str:
    """A fresh random console token (192 bits, URL-safe)."""
    return secrets.token_urlsafe(24)


def resolve_token(given: str | None, env: Mapping[str, str]) -> tuple[str, bool]:
    """The token to require and whether it was generated.

    The one given, else ``$AKGENTIC_CONSOLE_TOKEN``, else a new random token (the
    caller prints it). A blank token, one shorter than :data:`MIN_TOKEN_LENGTH`
    or one with other characters than :func:`check_token` allows is refused.
    """
    token = given if given is not None else env.get(TOKEN_ENV_VAR)
    if token is not None:
        check_token(token)
        if len(token) < MIN_TOKEN_LENGTH:
            raise ValueError(f"the console token must be at least {MIN_TOKEN_LENGTH} characters")
        return token, False
    return new_token(), True


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            text: str = value.decode("latin-1")
            return text
    return None


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


class AccessGuard:
    """ASGI middleware enforcing the rules of the module docstring."""

    def __init__(
        self, app: ASGIApp, token: str, *, loopback: bool, origin: str | None = None
    ) -> None:
        check_token(token)
        self.app = app
        self.token = token
        self.loopback = loopback
        #: The public origin's host[:port] (a TLS reverse proxy's), accepted besides Host.
        self.public_netloc = urlsplit(origin).netloc if origin else None
        #: Behind a TLS proxy the cookie is marked Secure (never sent over plain HTTP).
        self.secure_cookie = bool(origin and origin.startswith("https://"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            # A plugin's routes may accept websockets: the same token, Host and, since a
            # browser opens them from any page, Origin rules apply to the handshake.
            if self._problem(scope) is not None or self._foreign_origin(scope):
                await receive()
                await send({"type": "websocket.close", "code": 1008})
                return
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = self._problem(scope)
        if problem is not None:
            status, detail = problem
            await _refuse(send, status, detail)
            return
        if self._opening_page(scope) and not self._from_cookie(scope):
            await self._set_cookie_and_redirect(send)
            return
        await self.app(scope, receive, self._with_headers(send))

    # -- checks -----------------------------------------------------------
    def _problem(self, scope: Scope) -> tuple[int, str] | None:
        host = _header(scope, b"host")
        if self.loopback and host is not None and _host_name(host) not in _LOOPBACK_NAMES:
            return 403, "this console only answers to a loopback host name"
        if not (self._from_header(scope) or self._from_cookie(scope) or self._opening_page(scope)):
            return 401, "a valid console token is required (open the URL akgentic serve printed)"
        if scope.get("method", "GET") not in _SAFE_METHODS and self._foreign_origin(scope):
            return 403, "cross-origin requests may not change anything"
        return None

    def _foreign_origin(self, scope: Scope) -> bool:
        origin = _header(scope, b"origin")
        if origin is None:
            return False
        netloc = urlsplit(origin).netloc
        host = _header(scope, b"host")
        return netloc != host and (self.public_netloc is None or netloc != self.public_netloc)

    def _matches(self, candidate: str | None) -> bool:
        if candidate is None:
            return False
        return hmac.compare_digest(candidate.encode(), self.token.encode())

    def _from_header(self, scope: Scope) -> bool:
        value = _header(scope, b"authorization") or ""
        scheme, _, credential = value.partition(" ")
        return scheme.lower() == "bearer" and self._matches(credential.strip())

    def _from_cookie(self, scope: Scope) -> bool:
        raw = _header(scope, b"cookie")
        if not raw:
            return False
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(raw)
        except CookieError:  # a malformed cookie header is simply not a credential
            return False
        morsel = cookie.get(COOKIE_NAME)
        return morsel is not None and self._matches(morsel.value)

    def _opening_page(self, scope: Scope) -> bool:
        """A GET of the page itself carrying the right ``?token=`` (the printed URL)."""
        if scope.get("method") not in ("GET", "HEAD") or scope.get("path") != "/":
            return False
        query = scope.get("query_string", b"").decode("latin-1")
        values = parse_qs(query).get("token", [])
        return any(self._matches(v) for v in values)

    async def _set_cookie_and_redirect(self, send: Send) -> None:
        cookie = f"{COOKIE_NAME}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        if self.secure_cookie:
            cookie += "; Secure"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", b"/"),
                    (b"content-length", b"0"),
                    (b"set-cookie", cookie.encode("latin-1")),
                    *SECURITY_HEADERS,
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    @staticmethod
    def _with_headers(send: Send) -> Send:
        async def sending(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {key.lower() for key, _value in headers}
                headers.extend(h for h in SECURITY_HEADERS if h[0] not in present)
                message["headers"] = headers
            await send(message)

        return sending


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
