"""Importing the tool layer stays light and keeps its layering."""

from __future__ import annotations

import json
import subprocess
import sys


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def test_importing_the_tool_package_does_not_import_pydantic_ai() -> None:
    modules = _modules_after("import akgentic.tool")
    assert "pydantic_ai" not in modules
    assert not any(name.startswith("pydantic_ai.") for name in modules)


def test_importing_the_tool_package_does_not_discover_plugins() -> None:
    modules = _modules_after("import akgentic.tool")
    assert "akgentic.plugins" not in modules
    assert "stevedore" not in modules


def test_the_core_layer_imports_no_domain_package() -> None:
    modules = _modules_after("import akgentic.tool.core")
    domains = {"akgentic.tool.team", "akgentic.tool.model", "akgentic.tool.mailbox"}
    assert not modules & domains
    assert not any(name.startswith(("akgentic.llm", "akgentic.agent")) for name in modules)


def test_the_deferred_module_is_not_on_the_core_facade() -> None:
    modules = _modules_after("import akgentic.tool")
    assert "akgentic.tool.core.deferred" not in modules


def test_importing_the_tool_package_loads_no_card_no_pydantic_and_no_actor_runtime() -> None:
    # The surface is resolved on first use, so the bare import stays a few modules.
    modules = _modules_after("import akgentic.tool")
    assert not {m for m in modules if m.startswith("akgentic_")}  # no plugin package
    assert not {m for m in modules if m.split(".")[0] in ("pydantic", "pykka", "yaml", "httpx")}
    assert not {m for m in modules if m.startswith("akgentic.core.")}
    assert "akgentic.tool.core.card" not in modules
    assert "akgentic.tool.aliases" in modules  # the seed-path finder is installed


def test_a_surface_name_loads_its_module_and_no_card() -> None:
    modules = _modules_after("from akgentic.tool import ToolCard, ToolFactory")
    assert {"akgentic.tool.core.card", "akgentic.tool.core.factory"} <= modules
    assert not {m for m in modules if m.startswith("akgentic_")}
    assert "pykka" not in modules  # the serializer, not the actor system
    assert "akgentic.plugins" not in modules
