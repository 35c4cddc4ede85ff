"""Tool panes: plugin panes, the context-state fallback, failing and hostile panes."""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any
from uuid import uuid4

import pytest

from akgentic.console.panes import PaneSource, clean_blocks, team_panes
from akgentic.plugins import ConsolePaneSpec, get_host, hookimpl
from akgentic.testing.plugins import inline_plugin

CARD = """\
name: pane-team
entry_point:
  card:
    agent_class: akgentic.agent.HumanProxy
    description: The human
    config: {name: "@Human", role: Human}
members:
  - card:
      agent_class: akgentic.agent.BaseAgent
      description: Works
      config:
        name: "@Worker"
        role: Worker
        model_cfg: {provider: openai, model: gpt-4.1-mini}
        tools:
          - card: skill
            skills:
              skills:
                - {name: triage, description: Sorting incoming work., content: First come.}
          - card: shout
message_types:
  - akgentic.agent.AgentMessage
"""


def _broken(source: PaneSource) -> list[dict[str, Any]]:
    raise RuntimeError("the pane's data source is down")


def _hostile(source: PaneSource) -> list[Any]:
    return [
        {"kind": "text", "text": "<script>alert(1)</script>"},
        {"kind": "list", "items": [1, None, "<b>x</b>"]},
        {"kind": "svg", "text": "<svg onload=alert(1)>"},
        42,
    ]


class _Panes:
    @hookimpl
    def akgentic_console_panes(self) -> list[ConsolePaneSpec]:
        return [
            ConsolePaneSpec(name="broken", card="skill", title="Broken", render=_broken),
            ConsolePaneSpec(name="hostile", card="skill", title="Hostile", render=_hostile),
        ]


def _team() -> Any:
    from akgentic.team.card_yaml import parse_team_card

    return parse_team_card(CARD, "pane-team.yaml")


def test_a_failing_pane_reports_its_error_and_the_other_panes_render() -> None:
    host = get_host()
    with inline_plugin(host, _Panes(), "test-panes"):
        panes = {p["name"]: p for p in team_panes(uuid4(), _team(), [], host.registry)}
    assert panes["broken"]["error"] == "RuntimeError: the pane's data source is down"
    assert panes["broken"]["blocks"] == []
    assert panes["skill"]["blocks"][0]["rows"] == [["@Worker", "triage", "Sorting incoming work."]]
    assert panes["hostile"]["blocks"] == [
        {"kind": "text", "text": "<script>alert(1)</script>"},
        {"kind": "list", "items": ["1", "None", "<b>x</b>"]},
        {"kind": "text", "text": "<svg onload=alert(1)>"},
        {"kind": "text", "text": "42"},
    ]


def test_a_card_without_a_pane_shows_its_latest_context_state_as_text() -> None:
    from akgentic.agent.config import AgentState
    from akgentic.team.models import AgentStateSnapshot
    from akgentic.tool.core.state import ToolState

    # The hello plugin (its own distribution) provides the card without a pane.
    shout_log_state: Any = importlib.import_module("akgentic_hello.shout").ShoutLogState
    team_id = uuid4()
    state = AgentState(
        tool_state=ToolState(
            context_baselines={"shout_log": shout_log_state(count=2, latest=["HI!", "YO!"])}
        )
    )
    snapshot = AgentStateSnapshot(team_id=team_id, agent_id="a1", name="@Worker", state=state)
    panes = {p["card"]: p for p in team_panes(team_id, _team(), [snapshot], get_host().registry)}
    assert panes["shout"]["source"] == "context"
    assert panes["shout"]["blocks"] == [
        {"kind": "text", "text": "@Worker: You have shouted 2 time(s); latest: HI! | YO!"}
    ]
    empty = team_panes(team_id, _team(), [], get_host().registry)
    shout = next(p for p in empty if p["card"] == "shout")
    assert "no context state recorded yet" in shout["blocks"][0]["text"]


def test_a_pane_record_with_a_bad_field_fails_its_check() -> None:
    with pytest.raises(TypeError, match="render"):
        ConsolePaneSpec(name="x", card="skill", title="X", render="no").check()  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="title"):
        ConsolePaneSpec(name="x", card="skill", title=" ", render=_broken).check()
    with pytest.raises(TypeError, match="state"):
        ConsolePaneSpec(name="x", card="skill", title="X", render=_broken, state=3).check()  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="list of blocks"):
        clean_blocks("text")


def test_importing_akgentic_and_building_the_cli_loads_no_web_library() -> None:
    code = (
        "import sys, akgentic, akgentic.console; from akgentic.cli.app import build_app; "
        "build_app(); print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
