"""Importing the LLM layer stays cheap: no pydantic-ai, no provider SDK, no HTTP stack."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["pydantic_ai", "openai", "httpx2", "httpx", "genai_prices"]


def _loaded_after(statement: str) -> dict[str, bool]:
    code = (
        "import json, sys\n"
        f"{statement}\n"
        f"print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_akgentic_llm_does_not_import_pydantic_ai_or_sdks() -> None:
    assert _loaded_after("import akgentic.llm") == dict.fromkeys(HEAVY, False)


def test_config_prompts_and_events_are_usable_without_pydantic_ai() -> None:
    statement = (
        "from akgentic.llm import ModelConfig, PromptTemplate, ToolCallEvent, ReactAgentConfig\n"
        "ReactAgentConfig(model_cfg=ModelConfig(provider='openai-chat', model='m'))\n"
        "PromptTemplate().render(); ToolCallEvent('r', 't', 'c', '{}')"
    )
    assert not any(_loaded_after(statement).values())


def test_accessing_react_agent_loads_pydantic_ai_lazily() -> None:
    assert _loaded_after("from akgentic.llm import ReactAgent")["pydantic_ai"] is True
