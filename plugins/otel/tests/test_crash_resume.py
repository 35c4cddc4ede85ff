"""A turn that spans a SIGKILL and a resume exports as one trace, with unchanged ids."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from uuid import UUID

from akgentic_otel.testing import OTLPReceiver, ReceivedSpan, decode_request

from akgentic.llm.scripted_server import ScriptedLLMServer

from .conftest import QUESTION, cli, team_card

# The child runs the team until the manager's question reached the human and is
# durable, says so, and waits to be killed: the model server lives in the test.
CHILD = """
import sys
from akgentic.plugin_api import ActorSystem, TeamCard, TeamManager, open_event_store

card = open(sys.argv[2], encoding="utf-8").read()
manager = TeamManager(ActorSystem(), open_event_store(sys.argv[1]))
runtime = manager.create_team(TeamCard.from_yaml(card))
runtime.send_to("@Manager", "please ask me about the report")
idle = runtime.wait_idle(60)
manager.get_persistence(runtime.id).flush(30)
print("asked" if idle else "busy", runtime.id, flush=True)
sys.stdin.readline()
"""


def _asked_then_killed(store: str, card: Path) -> UUID:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AKGENTIC_", "OTEL_"))}
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, store, str(card)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as child:
        try:
            assert child.stdout is not None
            # Bounded: a child that fails keeps its actor threads, and its pipe open.
            ready, _w, _x = select.select([child.stdout], [], [], 120)
            line = child.stdout.readline() if ready else ""
            assert line.startswith("asked "), f"the child did not get the question asked: {line!r}"
            os.kill(child.pid, signal.SIGKILL)
            assert child.wait(timeout=60) == -signal.SIGKILL
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=60)
    return UUID(line.split()[1])


def _answer_after_resume(store: str, team_id: UUID, answer: str) -> None:
    from akgentic.plugin_api import ActorSystem, SentMessage, TeamManager, open_event_store

    system = ActorSystem()
    event_store = open_event_store(store)
    try:
        manager = TeamManager(system, event_store)
        manager.stop_team(team_id)  # its process is gone: recorded as stopped
        runtime = manager.resume_team(team_id)
        asked = [
            e.event
            for e in event_store.load_events(team_id)
            if isinstance(e.event, SentMessage) and e.event.recipient.is_user_proxy
        ]
        assert [getattr(m.message, "content", "") for m in asked] == [QUESTION]
        question = asked[0].message.model_copy(update={"recipient": asked[0].recipient})
        runtime.process_human_input(answer, question)
        assert runtime.wait_idle(60)
        manager.stop_team(team_id)
    finally:
        system.shutdown(timeout=10)
        event_store.close()


def _json_spans(store: str, team_id: UUID) -> list[ReceivedSpan]:
    result = cli("team", "trace", str(team_id), "--store", store, "--json")
    assert result.returncode == 0, result.stderr
    json.loads(result.stdout)
    return decode_request(result.stdout.encode(), "application/json")


def _ids(spans: list[ReceivedSpan]) -> dict[str, tuple[str, str, str]]:
    return {s.span_id: (s.trace_id, s.parent_span_id, s.name) for s in spans}


def test_a_turn_across_a_sigkill_and_a_resume_is_one_trace(
    llm: ScriptedLLMServer, receiver: OTLPReceiver, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path}/akgentic.db"
    card = tmp_path / "team.yaml"
    card.write_text(team_card(llm), encoding="utf-8")
    team_id = _asked_then_killed(store, card)

    before = _json_spans(store, team_id)
    assert len({s.trace_id for s in before}) == 1
    asking = [s for s in before if s.name == "invoke_agent @Manager"]
    assert len(asking) == 1

    _answer_after_resume(store, team_id, "blue")
    exported = cli("team", "trace", str(team_id), "--store", store, "--otlp", receiver.url)
    assert exported.returncode == 0, exported.stderr
    after = receiver.wait_for(lambda spans: len(spans) >= int(exported.stdout.split()[1]))

    # Nothing exported before the crash changed id, parent or trace.
    assert _ids(before).items() <= _ids(after).items()
    assert len({s.trace_id for s in after}) == 1, "the resumed turn left its trace"
    roots = [s for s in after if not s.parent_span_id]
    assert len(roots) == 1
    managers = sorted(
        (s for s in after if s.name == "invoke_agent @Manager"), key=lambda s: s.start_ns
    )
    assert len(managers) == 2
    asked, noted = managers
    assert asked.span_id == asking[0].span_id
    # The human's answer links back to the question: the turn that handles it hangs
    # from the turn that asked, although another process made it.
    assert noted.parent_span_id == asked.span_id
    assert noted.attributes["akgentic.message.from"] == "@Human"
    assert noted.start_ns > max(s.end_ns for s in before)
    chats = [s for s in after if s.parent_span_id == noted.span_id]
    assert [c.name for c in chats] == ["chat manager-model"]
    assert roots[0].end_ns >= noted.end_ns
