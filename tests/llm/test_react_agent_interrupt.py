"""ReactAgent.interrupt: a run waiting on a model that never answers ends, and no run follows."""

from __future__ import annotations

import threading

import pytest

from akgentic.llm import ReactAgent, ReactAgentConfig, RunStoppedError
from akgentic.llm.scripted_server import ScriptedLLMServer, hang, text
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
