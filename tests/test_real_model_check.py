"""The logic of ``scripts/real_model_check.py`` that runs without a model.

The driver runs a real team (the demo card, its manager answered by the scripted
server through ``akgentic run --scripted``) into a real SQLite store; the checks
read that log. The hostile cases append to the stored log the events of a turn that
outlived the stop, as the orphaned manager of issue 33 wrote them.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "real_model_check.py"


def _driver() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_model_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def driver() -> ModuleType:
    return _driver()


@pytest.fixture(scope="module")
def run(driver: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The demo card run by the driver against the scripted server: one question."""
    tmp = tmp_path_factory.mktemp("real_model")
    script = tmp / "script.yaml"
    script.write_text(
        'members:\n  "@Manager":\n    - send:\n        - to: "@Human"\n          message: Hi.\n'
        "  Researcher:\n    - text: unused\n"
    )
    team = driver.Team("scripted", "examples/demo-team.yaml", ("Hello?",))
    return driver.run_team(team, tmp / "run", ["--scripted", str(script)], timeout=60)


def _events(run: Any) -> list[Any]:
    from akgentic.team.urls import open_event_store

    store = open_event_store(f"sqlite:///{run.workdir / 'store.db'}")
    try:
        (process,) = store.list_teams()
        return store.load_events(process.team_id)
    finally:
        store.close()


def _kinds(driver: ModuleType, events: list[Any]) -> list[tuple[str, str]]:
    return [(driver._name(e.event), driver._kind(e.event)) for e in events]


def test_a_clean_run_passes_and_reports_the_managers_turn(run: Any) -> None:
    assert run.exit_code == 0 and run.problems == [] and run.turn_failures == []
    (manager,) = [t for t in run.turns if t.agent == "@Manager"]
    assert manager.finished and manager.requests == 1 and manager.output_tokens > 0
    assert 0 < manager.model_s <= manager.wall_s


def test_the_summary_is_one_json_object_per_team(driver: ModuleType, run: Any) -> None:
    summary = driver.summarise([run])
    assert summary["passed"] is True
    assert summary["teams"]["scripted"]["model_requests"] == 1
    assert summary["teams"]["scripted"]["turns"] == len(run.turns)


def test_a_turn_cut_by_the_end_of_the_log_is_unfinished(driver: ModuleType, run: Any) -> None:
    events = _events(run)
    cut = next(
        i
        for i, e in enumerate(events)
        if driver._kind(e.event) == "ProcessedMessage" and driver._name(e.event) == "@Manager"
    )
    (manager,) = [t for t in driver.turn_timings(events[:cut]) if t.agent == "@Manager"]
    assert not manager.finished and manager.requests == 1


def _append(events: list[Any], picked: list[Any]) -> list[Any]:
    """``events`` followed by copies of ``picked``, numbered on."""
    last = events[-1].sequence
    return events + [e.model_copy(update={"sequence": last + i + 1}) for i, e in enumerate(picked)]


def test_a_model_reply_logged_after_the_stop_is_flagged(driver: ModuleType, run: Any) -> None:
    events = _events(run)
    assert driver.acts_after_stop(events) == []
    assert _kinds(driver, events)[-1] == ("@Orchestrator", "TeamStoppingEvent")
    orphan = [
        e
        for e in events
        if driver._name(e.event) == "@Manager"
        and driver._kind(e.event) in ("LlmMessageEvent", "SentMessage")
    ]
    problems = driver.acts_after_stop(_append(events, orphan))
    assert len(problems) == len(orphan) and "@Manager LlmMessageEvent after the stop" in problems[0]


def test_a_resumed_agent_may_act_once_asked_again(driver: ModuleType, run: Any) -> None:
    events = _events(run)
    resumed = [
        e
        for e in events
        if (driver._name(e.event), driver._kind(e.event))
        in {
            ("@Human", "SentMessage"),
            ("@Manager", "ReceivedMessage"),
            ("@Manager", "LlmMessageEvent"),
        }
    ]
    assert driver.acts_after_stop(_append(events, resumed)) == []


def test_an_orphan_in_the_store_fails_the_run(driver: ModuleType, run: Any, tmp_path: Path) -> None:
    from akgentic.team.urls import open_event_store

    events = _events(run)
    shutil.copy(run.workdir / "store.db", tmp_path / "store.db")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    reply = next(e for e in events if driver._kind(e.event) == "LlmMessageEvent")
    store = open_event_store(url)
    try:
        store.save_event(reply.model_copy(update={"sequence": events[-1].sequence + 1}))
    finally:
        store.close()
    _, problems, _ = driver.examine_store(url)
    assert any("after the stop" in line for line in problems)


def test_the_template_renders_gemma_turns_with_tools_and_tool_calls() -> None:
    import json

    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = json.dumps  # what transformers and llama.cpp give templates
    template = env.from_string((SCRIPT.parent / "real_model" / "gemma3-tools.jinja").read_text())
    call = {"id": "1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "1", "content": "done"},
    ]
    text = template.render(
        messages=messages, tools=[tool], bos_token="<bos>", add_generation_prompt=True
    )
    assert text.startswith("<bos><start_of_turn>user\nBe brief.\n\nYou can call the tools")
    assert json.dumps(tool) in text and "<|im_start|>" not in text
    assert "Go.<end_of_turn>\n<start_of_turn>model\n<tool_call>\n" in text
    assert '{"name": "f", "arguments": {"a": 1}}\n</tool_call><end_of_turn>\n' in text
    assert text.endswith(
        "<start_of_turn>user\n<tool_response>\ndone\n</tool_response><end_of_turn>\n"
        "<start_of_turn>model\n"
    )


def test_a_failed_turn_is_reported_not_a_problem_and_its_call_is_model_time(
    driver: ModuleType, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text('members:\n  "@Manager": []\n  Researcher: []\n')
    team = driver.Team("failing", "examples/demo-team.yaml", ("Hello?",))
    run = driver.run_team(team, tmp_path / "run", ["--scripted", str(script)], timeout=60)
    # (whether its ErrorMessage lands before or after the stop is a race: not asserted)
    assert not [line for line in run.problems if "ErrorMessage from" in line]
    assert run.exit_code == 3
    assert len(run.turn_failures) == 1 and run.turn_failures[0].startswith("@Manager: ")
    (manager,) = [t for t in run.turns if t.agent == "@Manager"]
    assert manager.requests == 0 and manager.model_s > 0
