"""WebRoutesContract: what every plugin serving routes from ``akgentic serve`` must honour.

A plugin that registers a :class:`~akgentic.plugins.WebRoutesSpec` through
``akgentic_web_routes`` proves, by subclassing this class in its test suite, that its
routes sit behind the console's access rules and do not break the console::

    from akgentic.testing import WebRoutesContract

    class TestA2ARoutes(WebRoutesContract):
        routes_name = "a2a"                     # the name the plugin registers
        plugin = "akgentic_a2a.plugin"          # module with the akgentic_web_routes hook
        probe_path = "/"                        # a GET under the prefix that answers

What a subclass may set:

- ``routes_name`` and ``plugin`` (required): the registered name and the hook
  implementations (a module, or its dotted import path). Every test runs in an
  isolated plugin host holding the built-in SQLite store and ``plugin`` only.
- ``probe_path``: a path under the prefix (starting with ``/``) that answers a GET
  carrying the token with a status below 500; ``probe_statuses`` the statuses that
  count as an answer (default: any below 500 but 401, 403 and 503).

The kit serves a real console on a loopback port and checks, for the plugin's
routes: a request without the token is refused, a request with it reaches the
plugin, a write from another origin and a request naming a foreign host are
refused, every answer carries the console's security headers, and the console's
own API keeps working beside them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from akgentic.plugins import PluginInfo, WebRoutesSpec, current_registry
from akgentic.testing.contract_plugin import register_contract_plugin

__all__ = ["WebRoutesContract"]

#: The statuses that mean the access rules, not the plugin, answered.
_REFUSED = frozenset({401, 403})


class WebRoutesContract:
    """Subclass and set ``routes_name`` and ``plugin``; every test then runs."""

    routes_name: ClassVar[str | None] = None
    plugin: ClassVar[object | None] = None
    probe_path: ClassVar[str] = "/"
    probe_statuses: ClassVar[frozenset[int] | None] = None

    @pytest.fixture(autouse=True)
    def _routes_plugin(self, register_plugin: Callable[..., PluginInfo]) -> None:
        from akgentic.builtin import sqlite_store

        if self.routes_name is None or self.plugin is None:
            pytest.fail(f"{type(self).__name__} must set routes_name and plugin")
        register_plugin(sqlite_store, "contract-sqlite")
        register_contract_plugin(
            self,
            self.routes_name,
            self.plugin,
            register_plugin,
            name_attribute="routes_name",
            what="web routes record",
        )

    @pytest.fixture
    def served(self, tmp_path: Path) -> Iterator[tuple[Any, httpx.Client]]:
        """A console with the plugin's routes on a loopback port, and a client with its token."""
        from akgentic.testing.console import running_console

        with running_console(f"sqlite:///{tmp_path / 'store.db'}") as (server, client):
            yield server, client

    # -- helpers ----------------------------------------------------------
    def spec(self) -> WebRoutesSpec:
        """The plugin's registered record."""
        assert self.routes_name is not None
        routes = current_registry().web_routes()
        assert self.routes_name in routes, (
            f"no web routes named {self.routes_name!r}; registered: {sorted(routes)}"
        )
        return routes[self.routes_name]

    def probe_url(self) -> str:
        """The probed path, under the record's prefix."""
        assert self.probe_path.startswith("/"), "probe_path must start with '/'"
        return self.spec().prefix + self.probe_path

    def _answered(self, status: int) -> bool:
        if self.probe_statuses is not None:
            return status in self.probe_statuses
        return status < 500 and status not in _REFUSED

    # -- the record -------------------------------------------------------
    def test_the_record_passes_its_check_with_a_free_prefix(self) -> None:
        spec = self.spec()
        spec.check()
        assert spec.prefix not in {"/api", "/static"}

    # -- the access rules ---------------------------------------------------
    def test_a_request_without_the_token_is_refused(self, served: tuple[Any, httpx.Client]) -> None:
        server, _client = served
        with httpx.Client(base_url=server.url, timeout=30) as anonymous:
            response = anonymous.get(self.probe_url())
        assert response.status_code == 401, response.text

    def test_a_request_with_the_token_reaches_the_plugin(
        self, served: tuple[Any, httpx.Client]
    ) -> None:
        _server, client = served
        response = client.get(self.probe_url())
        assert self._answered(response.status_code), (response.status_code, response.text)

    def test_a_write_from_another_origin_is_refused(self, served: tuple[Any, httpx.Client]) -> None:
        _server, client = served
        response = client.post(
            self.probe_url(), headers={"Origin": "https://elsewhere.example"}, content=b"{}"
        )
        assert response.status_code == 403, response.text

    def test_a_foreign_host_name_is_refused_on_loopback(
        self, served: tuple[Any, httpx.Client]
    ) -> None:
        _server, client = served
        response = client.get(self.probe_url(), headers={"Host": "rebound.example"})
        assert response.status_code in _REFUSED | {400, 421}, response.text

    def test_answers_carry_the_console_security_headers(
        self, served: tuple[Any, httpx.Client]
    ) -> None:
        _server, client = served
        response = client.get(self.probe_url())
        assert response.headers.get("x-content-type-options") == "nosniff"
        assert "frame-ancestors 'none'" in response.headers.get("content-security-policy", "")

    def test_the_console_api_keeps_working_beside_the_routes(
        self, served: tuple[Any, httpx.Client]
    ) -> None:
        _server, client = served
        response = client.get("/api/teams")
        assert response.status_code == 200, response.text
