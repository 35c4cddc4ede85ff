"""The seed's ``akgentic.tool.planning`` path serves this plugin's own classes."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest


def test_the_seed_import_path_gives_the_plugin_classes() -> None:
    import akgentic_planning
    from akgentic.tool.planning import (  # type: ignore[import-not-found]  # an alias path
        GetPlanning,
        PlanningTool,
    )

    assert PlanningTool is akgentic_planning.PlanningTool
    assert GetPlanning is akgentic_planning.GetPlanning


def test_importing_akgentic_tool_runs_no_discovery_and_loads_no_plugin() -> None:
    code = (
        "import sys, akgentic.tool\n"
        "assert 'akgentic_planning' not in sys.modules\n"
        "import akgentic.plugins.registry as r\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_the_stored_payloads_are_registered_with_the_original_paths() -> None:
    from akgentic_planning import plugin
    from akgentic_planning.models import PlanningStateEvent

    specs = {spec.name: spec for spec in plugin.akgentic_message_types()}
    registered: object = specs["PlanningStateEvent"].message_class
    assert registered is PlanningStateEvent
    assert "akgentic.tool.planning.models.PlanningStateEvent" in specs["PlanningStateEvent"].aliases


class _Empty:
    """A plugin that registers nothing (the host then lacks akgentic-planning)."""


def _forget(prefix: str) -> None:
    import akgentic.tool

    for name in [n for n in sys.modules if n == prefix or n.startswith(prefix + ".")]:
        del sys.modules[name]
    vars(akgentic.tool).pop(prefix.rsplit(".", 1)[-1], None)


def test_without_the_plugin_the_seed_path_names_the_distribution(register_plugin: Any) -> None:
    import importlib

    from akgentic.tool.aliases import AliasNotInstalledError

    _forget("akgentic.tool.planning")
    try:
        register_plugin(_Empty(), "empty")
        with pytest.raises(AliasNotInstalledError, match="pip install akgentic-planning"):
            importlib.import_module("akgentic.tool.planning")
    finally:
        _forget("akgentic.tool.planning")
