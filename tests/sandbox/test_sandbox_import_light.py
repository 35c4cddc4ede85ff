"""The sandbox contract imports no backend, no Docker SDK and discovers no plugin."""

from __future__ import annotations

import json
import subprocess
import sys


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(json.loads(out))


def test_using_the_sandbox_contract_loads_no_backend_plugin() -> None:
    modules = _modules_after(
        "from akgentic.sandbox import ExecResult, ResourceLimits, validate_command, "
        "SandboxBackend\nvalidate_command('echo hi')"
    )
    assert not {m for m in modules if m.split(".")[0] in ("docker", "akgentic_docker")}
    assert "akgentic_bwrap" not in modules
    assert "stevedore" not in modules and "akgentic.plugins.host" not in modules


def test_listing_backends_does_not_import_the_docker_sdk() -> None:
    modules = _modules_after(
        "from akgentic.plugins import get_host\nget_host().registry.sandbox_backends()"
    )
    assert not {m for m in modules if m.split(".")[0] == "docker"}
