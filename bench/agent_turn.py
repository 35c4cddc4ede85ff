"""Framework overhead of one agent round trip, and the import cost of the agent stack.

A human asks a manager; the manager's model names the ``Developer`` role, so a
developer is hired and the request delegated to it; the developer answers the
manager, who answers the human. Four hops (human → manager → developer → manager →
human) and three model runs, every model a pydantic-ai FunctionModel whose (async)
function answers instantly, so the time measured is the framework's: actors,
telemetry, tool cards, context updates, routing, hiring, agent start and the
ReAct loop of ``akgentic.llm.turn``. (The model function is async like every real provider's client;
a plain ``def`` would add a worker-thread hand-off per model request that no real
model pays.)

Every round trip does the same work: between round trips (outside the timing) the
hired developer is fired and the manager's conversation cleared, so the team and the
history do not grow with the number of rounds and the median does not drift with
``--rounds``. After ``--warmup`` unmeasured round trips, ``--rounds`` are measured.

Prints one JSON object:

- ``overhead_ms_per_hop``: median round trip / 4 (the headline; target < 5 ms);
- ``overhead_ms_per_hop_spread``: p10, p90, min and max of round trip / 4;
- ``round_trip_ms``: median, p10, p90, min, max;
- ``model_request_ms``: median (and p10/p90) of the instant model's own
  ``request`` (with the message preparation every request needs): the part of a
  model run that a real model replaces with its network time;
- ``framework_ms_per_hop``: (median round trip - 3 * model request) / 4, akgentic's
  own share;
- ``pydantic_ai_agent_run_ms``: for comparison, median (and p10/p90) of one run of a
  reused ``pydantic_ai.Agent`` with the same model, output type, tools (the
  MailboxTool and TeamTool functions every BaseAgent carries) and two dynamic system
  prompts, from an empty history — what each model run cost when ReactAgent drove
  pydantic-ai's agent graph (three such runs, and three model requests, are made
  between consecutive round trips, so all see the same load);
- ``breakdown_ms_per_hop``: medians, per round trip / 4, of the time actor threads
  spent in ``ReactAgent.run_sync`` (``llm_runs``; includes the model requests),
  in ``BaseAgent.on_start`` of the hired developer (``agent_start``; it overlaps the
  manager's turn), and in ``TeamTool.hire`` (``hire``, without the start);
- ``import_akgentic_team_s`` and ``import_akgentic_agent_s``: importing each layer's
  main classes (``TeamManager``..., ``BaseAgent``...) in a fresh interpreter, best of three.

Run: ``.venv/bin/python bench/agent_turn.py [--rounds N] [--warmup N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

HOPS = 4
MODEL_RUNS = 3


def import_seconds(statement: str, runs: int = 3) -> float:
    """Best wall time of ``statement`` in a fresh interpreter (interpreter start excluded).

    The statements import the layer's main classes, not just the package: the packages
    export lazily, so a bare ``import akgentic.team`` would measure almost nothing.
    """
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    best = float("inf")
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
        )
        best = min(best, float(out.stdout.strip().splitlines()[-1]))
    return round(best, 3)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of ``values`` (``fraction`` in 0..1)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def instant_reply(recipient: str, message_type: str, message: str) -> Any:
    """A model response carrying one StructuredOutput request, as JSON text."""
    from pydantic_ai.messages import ModelResponse, TextPart

    from akgentic.agent import Request, StructuredOutput

    request = Request(recipient=recipient, message_type=message_type, message=message)
    return ModelResponse(parts=[TextPart(StructuredOutput(messages=[request]).model_dump_json())])


def bare_agent() -> Callable[[int], float]:
    """A plain pydantic-ai agent shaped like one agent's turn; returns a timed-run function."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from akgentic.agent import StructuredOutput
    from akgentic.tool.mailbox import MailboxTool
    from akgentic.tool.team import TeamTool

    response = instant_reply("@Manager", "response", "Did it.")

    async def model(messages: list[ModelMessage], info: AgentInfo) -> Any:
        return response

    tools: list[Callable[..., Any]] = [*MailboxTool().get_tools(), *TeamTool().get_tools()]
    agent: Agent[None, Any] = Agent(FunctionModel(model), output_type=StructuredOutput, tools=tools)

    @agent.system_prompt(dynamic=True)
    async def backstory() -> str:
        return "You are a useful assistant"

    @agent.system_prompt(dynamic=True)
    async def today() -> str:
        return "Today's date is 2025-01-01."

    loop = asyncio.new_event_loop()

    def run(index: int) -> float:
        start = time.perf_counter()
        loop.run_until_complete(agent.run(f"Do task {index}."))
        return time.perf_counter() - start

    return run


def bare_request() -> Callable[[int], float]:
    """The instant model's own request, prepared as every request is; returns a timer."""
    from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart, repair_messages
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from akgentic.agent import StructuredOutput
    from akgentic.llm.output_spec import OutputSpec

    response = instant_reply("@Manager", "response", "Did it.")

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> Any:
        return response

    model = FunctionModel(answer)
    params = OutputSpec.for_type(StructuredOutput, native=False).parameters([])
    loop = asyncio.new_event_loop()

    def run(index: int) -> float:
        start = time.perf_counter()
        history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(f"Do task {index}.")])]
        messages = model.prepare_messages(repair_messages(history), params)
        loop.run_until_complete(model.request(messages, None, params))
        return time.perf_counter() - start

    return run


class _Timer:
    """Adds the wall time of calls to a method, per label, across threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.totals: dict[str, float] = {}
        self.restore: list[tuple[type, str, Any]] = []

    def wrap(self, owner: type, name: str, label: str) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                with self.lock:
                    self.totals[label] = self.totals.get(label, 0.0) + time.perf_counter() - start

        self.restore.append((owner, name, original))
        setattr(owner, name, timed)

    def take(self) -> dict[str, float]:
        with self.lock:
            totals, self.totals = self.totals, {}
        return totals

    def undo(self) -> None:
        for owner, name, original in reversed(self.restore):
            setattr(owner, name, original)


def round_trips(
    rounds: int, warmup: int, subscribers: Sequence[Any] = ()
) -> tuple[list[float], list[dict[str, float]], list[float], list[float]]:
    """Wall seconds of each measured round trip, the timed sections inside each, and of
    the model requests and pydantic-ai agent runs made between round trips (three each
    per round trip). ``subscribers`` are attached to the team's orchestrator, as a
    manager attaches its own (``bench/otel_overhead.py`` measures what one costs)."""
    import pykka
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from akgentic.agent import AgentConfig, BaseAgent, HumanProxy
    from akgentic.agent.messages import AgentMessage
    from akgentic.core import ActorSystem, BaseConfig, Orchestrator
    from akgentic.core.agent_card import AgentCard
    from akgentic.llm.agent import ReactAgent
    from akgentic.tool.team import TeamTool

    timer = _Timer()
    timer.wrap(ReactAgent, "run_sync", "llm_runs")
    timer.wrap(BaseAgent, "on_start", "agent_start")
    timer.wrap(TeamTool, "hire", "hire")

    delegate = instant_reply("Developer", "request", "Do it.")
    done = instant_reply("@Human", "response", "Done.")
    did = instant_reply("@Manager", "response", "Did it.")

    def last_prompt(messages: list[ModelMessage]) -> str:
        part = messages[-1].parts[-1]
        content = getattr(part, "content", "")
        return content if isinstance(content, str) else ""

    async def manager_model(messages: list[ModelMessage], info: AgentInfo) -> Any:
        return delegate if "from @Human" in last_prompt(messages) else done

    async def developer_model(messages: list[ModelMessage], info: AgentInfo) -> Any:
        return did

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
            Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
        )
        team = system.proxy_ask(orchestrator, Orchestrator)
        for subscriber in subscribers:
            team.subscribe(subscriber)
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
        manager_proxy = system.proxy_ask(manager, BenchAgent)

        def reset() -> None:
            """Fire the hired developers and clear the manager's conversation."""
            for member in team.get_team():
                if member.role == "Developer":
                    system.proxy_ask(member).stop()
            deadline = time.monotonic() + 5
            while any(m.role == "Developer" for m in team.get_team()):
                if time.monotonic() > deadline:
                    raise RuntimeError("a fired developer did not leave the team")
                time.sleep(0.001)
            manager_proxy.clear()

        bare_run = bare_agent()
        request_run = bare_request()
        times: list[float] = []
        sections: list[dict[str, float]] = []
        bare: list[float] = []
        requests: list[float] = []
        for index in range(warmup + rounds):
            reset()
            # Interleaved with the round trips so both see the same machine load.
            bare_times = [bare_run(index * MODEL_RUNS + k) for k in range(MODEL_RUNS)]
            request_times = [request_run(index * MODEL_RUNS + k) for k in range(MODEL_RUNS)]
            answered.clear()
            timer.take()
            start = time.perf_counter()
            human_proxy.send(manager, AgentMessage(content=f"Task {index}"))
            if not answered.wait(30):
                raise RuntimeError("the round trip did not complete within 30 s")
            elapsed = time.perf_counter() - start
            if index >= warmup:
                times.append(elapsed)
                sections.append(timer.take())
                bare.extend(bare_times)
                requests.extend(request_times)
        return times, sections, bare, requests
    finally:
        timer.undo()
        pykka.ActorRegistry.stop_all(block=True, timeout=10)
        system.shutdown(timeout=5)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    team_import = import_seconds("from akgentic.team import TeamManager, TeamCard, TeamRuntime")
    agent_import = import_seconds("from akgentic.agent import BaseAgent, HumanProxy, AgentMessage")
    times, sections, bare, requests = round_trips(args.rounds, args.warmup)
    median = statistics.median(times)
    bare_median = statistics.median(bare)
    request_median = statistics.median(requests)

    def per_hop(label: str) -> float:
        return ms(statistics.median(s.get(label, 0.0) for s in sections) / HOPS)

    print(
        json.dumps(
            {
                "overhead_ms_per_hop": ms(median / HOPS),
                "overhead_ms_per_hop_spread": {
                    "p10": ms(percentile(times, 0.1) / HOPS),
                    "p90": ms(percentile(times, 0.9) / HOPS),
                    "min": ms(min(times) / HOPS),
                    "max": ms(max(times) / HOPS),
                },
                "hops_per_round_trip": HOPS,
                "model_runs_per_round_trip": MODEL_RUNS,
                "round_trip_ms": {
                    "median": ms(median),
                    "p10": ms(percentile(times, 0.1)),
                    "p90": ms(percentile(times, 0.9)),
                    "min": ms(min(times)),
                    "max": ms(max(times)),
                },
                "model_request_ms": {
                    "median": ms(request_median),
                    "p10": ms(percentile(requests, 0.1)),
                    "p90": ms(percentile(requests, 0.9)),
                },
                "framework_ms_per_hop": ms((median - MODEL_RUNS * request_median) / HOPS),
                "pydantic_ai_agent_run_ms": {
                    "median": ms(bare_median),
                    "p10": ms(percentile(bare, 0.1)),
                    "p90": ms(percentile(bare, 0.9)),
                },
                "breakdown_ms_per_hop": {
                    "llm_runs": per_hop("llm_runs"),
                    "model_requests": ms(MODEL_RUNS * request_median / HOPS),
                    "agent_start": per_hop("agent_start"),
                    "hire": per_hop("hire"),
                },
                "rounds": len(times),
                "warmup": args.warmup,
                "import_akgentic_team_s": team_import,
                "import_akgentic_agent_s": agent_import,
                "target_ms_per_hop": 5.0,
            }
        )
    )


if __name__ == "__main__":
    main()
