"""Importing the core is cheap and layered: pydantic, pykka and the stdlib only.

How long the import takes is a benchmark figure (``bench/imports.py``), not a test:
a wall-clock limit flakes on a loaded machine. What is tested is what makes it cheap,
which modules an import loads and which it must not.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Libraries the core never needs: LLM clients, HTTP stacks, YAML, plugin discovery.
HEAVY = ("pydantic_ai", "openai", "httpx", "yaml", "stevedore", "pluggy", "mcp", "tavily")


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _kernel_outside_core(modules: set[str]) -> set[str]:
    # akgentic._lazy is the package-export helper, not a kernel layer.
    allowed = ("akgentic.core", "akgentic._lazy")
    return {m for m in modules if m.startswith("akgentic.") and not m.startswith(allowed)}


def _heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in HEAVY}


def test_importing_the_core_package_alone_loads_neither_pydantic_nor_pykka() -> None:
    modules = _modules_after("import akgentic.core")
    assert "pydantic" not in modules
    assert "pykka" not in modules
    assert not {m for m in modules if m.startswith("akgentic.core.")}


def test_a_public_name_loads_only_what_defines_it() -> None:
    modules = _modules_after("from akgentic.core import BaseConfig")
    assert "akgentic.core.agent_config" in modules
    assert "pydantic" in modules
    # BaseConfig needs no actor runtime and no message model.
    assert "pykka" not in modules
    assert "akgentic.core.actor_system" not in modules
    assert "akgentic.core.messages.message" not in modules


def test_the_serializer_does_not_load_the_actor_system() -> None:
    modules = _modules_after("import akgentic.core.utils.serializer")
    assert "pykka" not in modules
    assert "akgentic.core.orchestrator" not in modules


def test_the_core_imports_no_other_kernel_layer_and_no_llm_library() -> None:
    modules = _modules_after(
        "import akgentic.core, akgentic.core.messages, akgentic.core.utils\n"
        "from akgentic.core import *"
    )
    assert "akgentic.core.orchestrator" in modules  # the star import did load it all
    assert _kernel_outside_core(modules) == set()
    assert _heavy(modules) == set()


def test_the_public_names_are_importable_from_their_documented_paths() -> None:
    from akgentic.core import (  # noqa: F401 - importing them is the test
        ActorSystem,
        AgentCard,
        BaseConfig,
        BaseState,
        EventSubscriber,
        Orchestrator,
        UserProxy,
    )
    from akgentic.core.actor_address import ActorAddress  # noqa: F401 - importing them is the test
    from akgentic.core.agent import Akgent, WarningError  # noqa: F401 - importing them is the test
    from akgentic.core.agent_config import ReadOnlyField  # noqa: F401 - importing it is the test

    # The old name still imports, with a warning naming the two classes it is taken for.
    with pytest.warns(DeprecationWarning, match="akgentic.agent.AgentConfig"):
        from akgentic.core.agent_config import AgentConfig  # noqa: F401 - importing it is the test
    from akgentic.core.messages.message import UserMessage  # noqa: F401 - importing them is the test
    from akgentic.core.messages.orchestrator import EventMessage, SentMessage  # noqa: F401 - importing them is the test
    from akgentic.core.orchestrator import STOP_TIMEOUT

    assert STOP_TIMEOUT == 30.0


def test_every_exported_name_resolves_to_the_object_of_its_module() -> None:
    import pykka

    import akgentic.core as core
    from akgentic.core.orchestrator import Orchestrator

    assert core.Orchestrator is Orchestrator
    assert core.ActorRegistry is pykka.ActorRegistry
    missing = [n for n in core.__all__ if n != "AgentConfig" and not hasattr(core, n)]
    assert missing == []
    assert set(core.__all__) <= set(dir(core))
