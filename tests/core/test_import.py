"""Importing the core is cheap and layered: pydantic, pykka and the stdlib only."""

from __future__ import annotations

import subprocess
import sys
import time


def _import_seconds() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import akgentic.core"], check=True)
    return time.perf_counter() - start


def test_importing_akgentic_core_takes_under_300_ms() -> None:
    # Best of three: the limit is about our import cost, not a busy machine.
    assert min(_import_seconds() for _ in range(3)) < 0.3


def test_the_core_imports_no_other_kernel_layer_and_no_llm_library() -> None:
    code = (
        "import sys, akgentic.core, akgentic.core.messages, akgentic.core.utils;"
        "bad = [m for m in sys.modules if m.startswith(('akgentic.', 'pydantic_ai', 'openai', "
        "'httpx')) and not m.startswith('akgentic.core')];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == ""


def test_the_public_names_are_importable_from_their_documented_paths() -> None:
    from akgentic.core import (  # noqa: F401
        ActorSystem,
        AgentCard,
        BaseConfig,
        BaseState,
        EventSubscriber,
        Orchestrator,
        UserProxy,
    )
    from akgentic.core.actor_address import ActorAddress  # noqa: F401
    from akgentic.core.agent import Akgent, WarningError  # noqa: F401
    from akgentic.core.agent_config import AgentConfig, ReadOnlyField  # noqa: F401
    from akgentic.core.messages.message import UserMessage  # noqa: F401
    from akgentic.core.messages.orchestrator import EventMessage, SentMessage  # noqa: F401
    from akgentic.core.orchestrator import STOP_TIMEOUT

    assert STOP_TIMEOUT == 30.0
