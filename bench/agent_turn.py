"""Framework overhead of one agent round trip, and the import cost of the agent stack.

A human asks a manager; the manager's model names the ``Developer`` role, so a
developer is hired and the request delegated to it; the developer answers the
manager, who answers the human. Four hops (human → manager → developer → manager →
human), every model a pydantic-ai FunctionModel answering instantly, so the time
measured is the framework's: actors, telemetry, tool cards, context updates, routing,
hiring and the pydantic-ai run loop.

Prints one JSON object: ``overhead_ms_per_hop`` (median round trip / 4),
``round_trip_ms`` (median and p90), ``llm_loop_ms_per_hop`` (the share of the round
trip spent inside ``ReactAgent.run_sync``, i.e. pydantic-ai's run loop with the
agent's capabilities, measured by timing that method), ``akgentic_ms_per_hop`` (the
rest: actors, telemetry, tool cards, routing, hiring), ``import_akgentic_team_s`` and
``import_akgentic_agent_s`` (each in a fresh interpreter, best of three).

Run: ``.venv/bin/python bench/agent_turn.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

HOPS = 4


def import_seconds(module: str, runs: int = 3) -> float:
    """Best wall time of ``import module`` in a fresh interpreter (interpreter start excluded)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    best = float("inf")
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
        )
        best = min(best, float(out.stdout.strip().splitlines()[-1]))
    return round(best, 3)


def round_trips(rounds: int, warmup: int) -> tuple[list[float], list[float]]:
    """Wall seconds of each measured round trip, and of the model runs inside each."""
    import pykka
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from akgentic.agent import (
        AgentConfig,
        AgentMessage,
        BaseAgent,
        HumanProxy,
        Request,
        StructuredOutput,
    )
    from akgentic.core import ActorSystem, AgentCard, BaseConfig, Orchestrator
    from akgentic.llm.agent import ReactAgent

    in_llm = [0.0]
    lock = threading.Lock()
    original_run_sync = ReactAgent.run_sync

    def timed_run_sync(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original_run_sync(self, *args, **kwargs)
        finally:
            with lock:
                in_llm[0] += time.perf_counter() - start

    ReactAgent.run_sync = timed_run_sync  # type: ignore[method-assign]

    def reply(*requests: Request) -> ModelResponse:
        return ModelResponse(
            parts=[TextPart(StructuredOutput(messages=list(requests)).model_dump_json())]
        )

    def last_prompt(messages: list[ModelMessage]) -> str:
        part = messages[-1].parts[-1]
        content = getattr(part, "content", "")
        return content if isinstance(content, str) else ""

    def manager_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = last_prompt(messages)
        if "from @Human" in prompt:
            return reply(Request(recipient="Developer", message_type="request", message="Do it."))
        return reply(Request(recipient="@Human", message_type="response", message="Done."))

    def developer_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return reply(Request(recipient="@Manager", message_type="response", message="Did it."))

    class BenchAgent(BaseAgent):
        def create_llm_model(self) -> Any:
            body = manager_model if self.config.role == "Manager" else developer_model
            return FunctionModel(body)

    answered = threading.Event()

    class BenchHuman(HumanProxy):
        def receiveMsg_AgentMessage(self, message: AgentMessage) -> None:
            answered.set()

    system = ActorSystem()
    try:
        orchestrator = system.createActor(
            Orchestrator, config=BaseConfig(name="@Orchestrator", role="Orchestrator")
        )
        team = system.proxy_ask(orchestrator, Orchestrator)
        cards = [
            AgentCard(
                description=role,
                agent_class=BenchAgent,
                config=AgentConfig(name=f"@{role}", role=role),
                can_be_hired=role == "Developer",
            )
            for role in ("Manager", "Developer")
        ]
        team.register_agent_profiles(cards)
        human = team.createActor(BenchHuman, config=BaseConfig(name="@Human", role="Human"))
        manager = team.createActor(BenchAgent, config=cards[0].get_config_copy())
        human_proxy = system.proxy_tell(human, HumanProxy)
        times: list[float] = []
        llm_times: list[float] = []
        for index in range(warmup + rounds):
            answered.clear()
            with lock:
                in_llm[0] = 0.0
            start = time.perf_counter()
            human_proxy.send(manager, AgentMessage(content=f"Task {index}"))
            if not answered.wait(30):
                raise RuntimeError("the round trip did not complete within 30 s")
            if index >= warmup:
                times.append(time.perf_counter() - start)
                with lock:
                    llm_times.append(in_llm[0])
        return times, llm_times
    finally:
        ReactAgent.run_sync = original_run_sync  # type: ignore[method-assign]
        pykka.ActorRegistry.stop_all(block=True, timeout=10)
        system.shutdown(timeout=5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    team_import = import_seconds("akgentic.team")
    agent_import = import_seconds("akgentic.agent")
    times, llm_times = round_trips(args.rounds, args.warmup)
    median = statistics.median(times)
    llm = statistics.median(llm_times)
    p90 = sorted(times)[max(0, int(len(times) * 0.9) - 1)]
    print(
        json.dumps(
            {
                "overhead_ms_per_hop": round(median * 1000 / HOPS, 3),
                "hops_per_round_trip": HOPS,
                "round_trip_ms": {"median": round(median * 1000, 3), "p90": round(p90 * 1000, 3)},
                "llm_loop_ms_per_hop": round(llm * 1000 / HOPS, 3),
                "akgentic_ms_per_hop": round((median - llm) * 1000 / HOPS, 3),
                "rounds": len(times),
                "import_akgentic_team_s": team_import,
                "import_akgentic_agent_s": agent_import,
                "target_ms_per_hop": 5.0,
            }
        )
    )


if __name__ == "__main__":
    main()
