"""ReactAgent.interrupt: a run waiting on a model that never answers ends, and no run follows."""

from __future__ import annotations

import threading

import pytest

from akgentic.llm import ReactAgent, ReactAgentConfig, RunStoppedError
from akgentic.llm.scripted_server import ScriptedLLMServer, hang, text, tool_call
from akgentic.testing.waiting import poll_until


def test_interrupt_from_another_thread_ends_a_hung_run_and_refuses_the_next() -> None:
    outcome: list[BaseException] = []
    ready = threading.Event()
    holder: list[ReactAgent[None]] = []
    with ScriptedLLMServer([hang()], fallback=text("never used")) as server:

        def run() -> None:
            # The agent belongs to the thread that builds it (its loop is that thread's).
            agent = ReactAgent[None](ReactAgentConfig(model_cfg=server.model_config()))
            holder.append(agent)
            ready.set()
            try:
                agent.run_sync("think")
            except BaseException as exc:
                outcome.append(exc)
            try:
                agent.run_sync("again")
            except BaseException as exc:
                outcome.append(exc)
            agent.close()

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        assert ready.wait(timeout=30)
        assert poll_until(lambda: len(server.requests) == 1, timeout=30)
        holder[0].interrupt()
        worker.join(timeout=30)
        assert not worker.is_alive(), "the interrupted run is still waiting on the model"
        assert [type(e) for e in outcome] == [RunStoppedError, RunStoppedError]
        assert len(server.requests) == 1, "an interrupted agent sent another request"
        assert holder[0].interrupted


def test_interrupt_before_any_run_refuses_runs_without_a_request() -> None:
    with ScriptedLLMServer(fallback=text("hi")) as server:
        with ReactAgent[None](ReactAgentConfig(model_cfg=server.model_config())) as agent:
            agent.interrupt()
            with pytest.raises(RunStoppedError):
                agent.run_sync("hello")
        assert server.requests == []


def test_close_from_another_thread_ends_the_run_and_its_thread_closes_the_loop() -> None:
    # A close that cannot close the loop a run drives elsewhere used to leave it open
    # (and the run going): the collector later freed the loop and its self-pipe socket
    # with a ResourceWarning, failing whichever test was running then.
    outcome: list[BaseException] = []
    ready = threading.Event()
    holder: list[ReactAgent[None]] = []
    with ScriptedLLMServer([hang()], fallback=text("never used")) as server:

        def run() -> None:
            agent = ReactAgent[None](ReactAgentConfig(model_cfg=server.model_config()))
            holder.append(agent)
            ready.set()
            try:
                agent.run_sync("think")
            except BaseException as exc:
                outcome.append(exc)

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        assert ready.wait(timeout=30)
        assert poll_until(lambda: len(server.requests) == 1, timeout=30)
        holder[0].close()
        worker.join(timeout=30)
        assert not worker.is_alive(), "the run goes on after its agent was closed"
        assert [type(e) for e in outcome] == [RunStoppedError]
        assert holder[0].closed
        assert holder[0].loop.is_closed(), "the loop was left open"
        holder[0].close()  # idempotent


def test_close_from_inside_a_run_closes_the_loop_as_the_run_ends() -> None:
    holder: list[ReactAgent[None]] = []

    def close_me() -> str:
        """Close the agent running this tool."""
        holder[0].close()
        return "closed"

    with ScriptedLLMServer(
        [tool_call("close_me", {}), text("never reached")], fallback=text("never used")
    ) as server:
        agent = ReactAgent[None](
            ReactAgentConfig(model_cfg=server.model_config()), tools=[close_me]
        )
        holder.append(agent)
        with pytest.raises(RunStoppedError):
            agent.run_sync("close yourself")
        assert agent.loop.is_closed(), "the loop was left open"
