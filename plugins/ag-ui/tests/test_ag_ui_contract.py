"""The ag-ui routes honour the console's access rules (the web-routes contract kit)."""

from __future__ import annotations

from akgentic.testing import WebRoutesContract


class TestAgUiRoutesContract(WebRoutesContract):
    routes_name = "ag-ui"
    plugin = "akgentic_ag_ui.plugin"
    probe_path = "/"
