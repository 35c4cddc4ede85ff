"""Importing the kernel loads no plugin and no optional heavy library."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["pydantic_ai", "stevedore", "qdrant_client", "psycopg", "pymongo", "weaviate", "docker"]


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(json.loads(out))


def test_import_akgentic_loads_no_plugin_and_no_optional_library() -> None:
    modules = _modules_after("import akgentic")
    assert not {m for m in modules if m.split(".")[0] in HEAVY}
    assert "akgentic.plugins.host" not in modules
    assert "akgentic_hello" not in modules
    assert "akgentic.builtin.core" not in modules


def test_import_of_the_plugin_api_does_not_discover_plugins() -> None:
    modules = _modules_after("import akgentic.plugins")
    assert "akgentic_hello" not in modules
    assert "akgentic.builtin.core" not in modules
    assert "stevedore" not in modules
