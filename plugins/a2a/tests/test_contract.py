"""The a2a plugin holds the promises of every web-routes plugin (WebRoutesContract)."""

from __future__ import annotations

from akgentic.testing import WebRoutesContract


class TestA2ARoutesContract(WebRoutesContract):
    routes_name = "a2a"
    plugin = "akgentic_a2a.plugin"
    probe_path = "/"
