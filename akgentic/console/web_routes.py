"""Routes plugins serve next to the console: the ``akgentic_web_routes`` hook.

Each :class:`~akgentic.plugins.specs.WebRoutesSpec` is built once, when the server
starts, and its ASGI application is mounted at the record's prefix inside the
console's application, so the console's access rules wrap it unchanged. A plugin
whose ``build`` fails costs only its own routes: they answer 503 with the reason,
and the console and the other plugins' routes keep working.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

    from akgentic.console.service import ConsoleService
    from akgentic.plugins.registry import PluginRegistry

__all__ = ["mount_web_routes"]

logger = logging.getLogger(__name__)

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class _Unavailable:
    """An ASGI app answering every HTTP request with 503 and why the routes are missing."""

    def __init__(self, reason: str) -> None:
        self.body = json.dumps({"detail": reason}).encode()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await send(
            {
                "type": "http.response.start",
                "status": 503,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": self.body})


def mount_web_routes(
    app: FastAPI, service: ConsoleService, registry: PluginRegistry | None = None
) -> dict[str, str]:
    """Mount every registered web-routes record on ``app``; prefix -> record name.

    A prefix claimed by two plugins raises
    :class:`~akgentic.plugins.errors.DuplicatePluginNameError` (the server does not
    start with an ambiguous address space); a ``build`` that raises is logged on one
    line and its prefix answers 503.
    """
    if registry is None:
        from akgentic.plugins.registry import current_registry

        registry = current_registry()
    mounted: dict[str, str] = {}
    for name, spec in sorted(registry.web_routes().items(), key=lambda item: item[1].prefix):
        try:
            asgi = spec.build(service)
            if not callable(asgi):
                raise TypeError(f"build returned {type(asgi).__name__}, not an ASGI application")
        except Exception as exc:  # a plugin's failure must not take the console down
            reason = f"web routes {name!r} ({spec.prefix}) unavailable: {exc}"
            logger.warning("%s", reason)
            asgi = _Unavailable(reason)
        app.mount(spec.prefix, asgi, name=f"plugin:{name}")
        mounted[spec.prefix] = name
    return mounted
