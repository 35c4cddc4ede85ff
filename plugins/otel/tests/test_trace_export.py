"""``akgentic team trace ID``: a stored run's GenAI spans, sent to a real OTLP/HTTP receiver."""

from __future__ import annotations

import json
import socket
from collections import Counter
from typing import Any

import pytest
from akgentic_otel.testing import OTLPReceiver, ReceivedSpan, decode_request

from .conftest import MANAGER_MODEL, RESEARCHER_MODEL, StoredRun, cli


def _stored(run: StoredRun) -> list[Any]:
    from akgentic.plugin_api import open_event_store

    store = open_event_store(run.store)
    try:
        return [stored.event for stored in store.load_events(run.team_id)]
    finally:
        store.close()


def _ns(message: Any) -> int:
    return int(message.timestamp.timestamp() * 1_000_000) * 1000


def _export(run: StoredRun, receiver: OTLPReceiver, *extra: str) -> list[ReceivedSpan]:
    result = cli("team", "trace", str(run.team_id), "--store", run.store, "--otlp", receiver.url)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("exported "), result.stdout
    count = int(result.stdout.split()[1])
    return receiver.wait_for(lambda spans: len(spans) >= count)


def _one(spans: list[ReceivedSpan], **where: Any) -> ReceivedSpan:
    found = [s for s in spans if all(getattr(s, k) == v for k, v in where.items())]
    assert len(found) == 1, (where, [s.name for s in found])
    return found[0]


def test_a_stored_run_exports_one_trace_per_turn_with_genai_spans(
    stored_run: StoredRun, receiver: OTLPReceiver
) -> None:
    spans = _export(stored_run, receiver)
    roots = [s for s in spans if not s.parent_span_id]
    assert [r.name for r in roots] == ["invoke_workflow trace-team"] * 2
    assert len({r.trace_id for r in roots}) == 2  # one trace per human message
    assert all(s.trace_id in {r.trace_id for r in roots} for s in spans)
    first = min(roots, key=lambda r: r.start_ns)
    turn = [s for s in spans if s.trace_id == first.trace_id]
    names = Counter(s.name for s in turn)
    assert names["invoke_agent @Manager"] == 2  # the human's request, the researcher's answer
    assert names["invoke_agent @Researcher"] == 1
    assert names["execute_tool update_planning"] == 1
    assert names[f"chat {MANAGER_MODEL}"] == 3  # tool call, request, answer
    assert names[f"chat {RESEARCHER_MODEL}"] == 1
    assert set(names) == {
        "invoke_workflow trace-team",
        "invoke_agent @Manager",
        "invoke_agent @Researcher",
        "execute_tool update_planning",
        f"chat {MANAGER_MODEL}",
        f"chat {RESEARCHER_MODEL}",
    }
    assert first.resource["service.name"] == "akgentic"
    assert first.resource["akgentic.team.id"] == str(stored_run.team_id)
    assert first.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert first.attributes["gen_ai.conversation.id"] == str(stored_run.team_id)


def test_spans_hang_from_the_turn_that_caused_them(
    stored_run: StoredRun, receiver: OTLPReceiver
) -> None:
    spans = _export(stored_run, receiver)
    by_id = {s.span_id: s for s in spans}
    root = min((s for s in spans if not s.parent_span_id), key=lambda r: r.start_ns)
    turn = [s for s in spans if s.trace_id == root.trace_id]
    managers = sorted(
        (s for s in turn if s.name == "invoke_agent @Manager"), key=lambda s: s.start_ns
    )
    asked, answered = managers
    researcher = _one(turn, name="invoke_agent @Researcher")
    tool = _one(turn, name="execute_tool update_planning")
    assert asked.parent_span_id == root.span_id
    assert asked.attributes["akgentic.message.from"] == "@Human"
    # The hops: the manager's request is handled under the manager's turn, the
    # researcher's answer under the researcher's.
    assert researcher.parent_span_id == asked.span_id
    assert researcher.attributes["akgentic.message.from"] == "@Manager"
    assert answered.parent_span_id == researcher.span_id
    assert tool.parent_span_id == asked.span_id
    for chat in (s for s in turn if s.name.startswith("chat ")):
        owner = by_id[chat.parent_span_id]
        assert owner.name == f"invoke_agent {chat.attributes['gen_ai.agent.name']}"
        assert chat.kind == "client"
        assert owner.start_ns <= chat.start_ns <= chat.end_ns <= owner.end_ns
    for span in turn:
        assert root.start_ns <= span.start_ns <= span.end_ns <= root.end_ns
    sent = [e for e in asked.events if e[0] == "akgentic.message.sent"]
    assert [e[2]["akgentic.message.to"] for e in sent] == ["@Researcher"]


def test_attributes_and_times_come_from_the_stored_events(
    stored_run: StoredRun, receiver: OTLPReceiver
) -> None:
    spans = _export(stored_run, receiver)
    log = _stored(stored_run)
    usages = [m.event for m in log if type(getattr(m, "event", None)).__name__ == "LlmUsageEvent"]
    chats = sorted((s for s in spans if s.name.startswith("chat ")), key=lambda s: s.start_ns)
    assert len(chats) == len(usages) > 0
    expected = Counter((u.model_name, u.input_tokens, u.output_tokens) for u in usages)
    got = Counter(
        (
            s.attributes["gen_ai.request.model"],
            s.attributes["gen_ai.usage.input_tokens"],
            s.attributes["gen_ai.usage.output_tokens"],
        )
        for s in chats
    )
    assert got == expected
    assert all(s.attributes["gen_ai.operation.name"] == "chat" for s in chats)
    assert all(s.attributes["gen_ai.provider.name"] == "openai" for s in chats)
    assert all(isinstance(s.attributes["akgentic.usage.cost_usd"], float) for s in chats)
    tool = _one(spans, name="execute_tool update_planning")
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "update_planning"
    assert tool.attributes["gen_ai.tool.type"] == "function"
    calls = [m.event for m in log if type(getattr(m, "event", None)).__name__ == "ToolCallEvent"]
    assert tool.attributes["gen_ai.tool.call.id"] == calls[0].tool_call_id
    # Times are the stored messages' own: the first root starts when the human's
    # message was sent, each member's turn when the member received its message.
    human = [m for m in log if type(m).__name__ == "SentMessage" and m.sender.is_user_proxy]
    roots = sorted((s for s in spans if not s.parent_span_id), key=lambda r: r.start_ns)
    assert [r.start_ns for r in roots] == [_ns(m) for m in human]
    received = {
        (m.sender.name, str(m.message_id)): _ns(m)
        for m in log
        if type(m).__name__ == "ReceivedMessage"
    }
    for span in spans:
        if span.name.startswith("invoke_agent "):
            key = (span.attributes["gen_ai.agent.name"], span.attributes["akgentic.message.id"])
            assert span.start_ns == received[key]
            assert span.attributes["gen_ai.operation.name"] == "invoke_agent"


def test_content_is_recorded_only_when_asked(stored_run: StoredRun) -> None:
    content_keys = {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    }
    args = ("team", "trace", str(stored_run.team_id), "--store", stored_run.store, "--json")
    plain = cli(*args)
    assert plain.returncode == 0, plain.stderr
    spans = decode_request(plain.stdout.encode(), "application/json")
    assert spans and not any(content_keys & set(s.attributes) for s in spans)
    assert "please find facts" not in plain.stdout
    with_content = cli(*args, "--content")
    assert with_content.returncode == 0, with_content.stderr
    spans = decode_request(with_content.stdout.encode(), "application/json")
    root = min((s for s in spans if not s.parent_span_id), key=lambda r: r.start_ns)
    assert "please find facts" in str(root.attributes["gen_ai.input.messages"])
    tool = _one(spans, name="execute_tool update_planning")
    assert json.loads(str(tool.attributes["gen_ai.tool.call.arguments"]))["update"]
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert all("gen_ai.output.messages" in s.attributes for s in chats)


def test_json_output_has_the_ids_of_the_otlp_export_every_time(
    stored_run: StoredRun, receiver: OTLPReceiver
) -> None:
    exported = _export(stored_run, receiver)
    args = ("team", "trace", str(stored_run.team_id), "--store", stored_run.store, "--json")
    first, second = cli(*args), cli(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout  # nothing random, nothing from the clock
    data = json.loads(first.stdout)
    span = data["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16  # hex, as OTLP JSON says
    printed = decode_request(first.stdout.encode(), "application/json")

    def ids(spans: list[ReceivedSpan]) -> set[tuple[str, str, str, str]]:
        return {(s.trace_id, s.span_id, s.parent_span_id, s.name) for s in spans}

    assert ids(printed) == ids(exported)


def test_without_a_target_the_trace_is_printed_as_a_tree(stored_run: StoredRun) -> None:
    result = cli("team", "trace", str(stored_run.team_id), "--store", stored_run.store)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert sum(line.startswith("trace ") for line in lines) == 2
    assert any(line.startswith("    invoke_agent @Manager") for line in lines)
    assert any("execute_tool update_planning" in line for line in lines)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["not-a-uuid"], 2, "is not a team id"),
        (["{team}", "--store", "sqlite:////nonexistent/dir/a.db"], 1, "no store at"),
        (["00000000-0000-4000-8000-000000000000"], 1, "no team 00000000"),
        (["{team}", "--store", "nosuch:///x"], 2, "no event store URL scheme named 'nosuch'"),
        (["{team}", "--store", "postgresql://u@127.0.0.1:1/x"], 1, "cannot connect to Postgre"),
        (["{team}", "--json", "--otlp", "http://127.0.0.1:1"], 2, "exclude each other"),
        (["{team}", "--otlp", "collector:4318"], 1, "not an OTLP/HTTP endpoint"),
    ],
)
def test_bad_input_is_one_error_line_and_a_nonzero_exit(
    stored_run: StoredRun, args: list[str], code: int, words: str
) -> None:
    argv = [a.replace("{team}", str(stored_run.team_id)) for a in args]
    if "--store" not in argv:
        argv += ["--store", stored_run.store]
    result = cli("team", "trace", *argv)
    assert result.returncode == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert words in lines[0], lines[0]
    assert result.stdout == ""


def test_an_unreachable_endpoint_is_a_clear_error_not_a_hang(stored_run: StoredRun) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    args = ("team", "trace", str(stored_run.team_id), "--store", stored_run.store)
    # cli() bounds the child: an exporter that hung would fail the test with a timeout.
    result = cli(*args, "--otlp", url, "--timeout", "1")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"could not export spans to {url}/v1/traces: connection refused" in lines[0]


def test_a_collector_that_refuses_or_stalls_is_a_clear_error(stored_run: StoredRun) -> None:
    args = ("team", "trace", str(stored_run.team_id), "--store", stored_run.store)
    with OTLPReceiver(status=400) as refusing:
        result = cli(*args, "--otlp", refusing.url, "--timeout", "2")
        assert refusing.requests >= 1 and refusing.spans == []
    assert result.returncode == 1 and "could not export spans" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    with OTLPReceiver(delay=60) as stalled:
        result = cli(*args, "--otlp", stalled.url, "--timeout", "1")
        assert stalled.requests >= 1
    assert result.returncode == 1, result.stderr
    assert "could not export spans" in result.stderr and "timed out" in result.stderr


def test_the_endpoint_comes_from_the_standard_variable(
    stored_run: StoredRun, receiver: OTLPReceiver
) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_SERVICE_NAME": "research-desk"}
    result = cli("team", "trace", str(stored_run.team_id), "--store", stored_run.store, env=env)
    assert result.returncode == 0, result.stderr
    spans = receiver.wait_for(lambda spans: len(spans) >= int(result.stdout.split()[1]))
    assert {s.resource["service.name"] for s in spans} == {"research-desk"}
