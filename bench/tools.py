"""Tool-card speed: one section per card of the catalog, printed as ONE JSON object::

    {"import_akgentic_tool_ms": ..., "import_plugins_loaded": 0,
     "notification": {"schedule_1000_ms": ..., "jitter_ms_p50": ..., "jitter_ms_p99": ...},
     "mcp": {"stdio_connect_ms": ..., "stdio_call_ms_p50": ..., "http_call_ms_p50": ...},
     "skill": {"prompt_us_per_turn": ..., "use_skill_us": ...},
     "metadata": {"first_render_ms": ..., "prompt_us_per_turn": ...}}

- ``import_akgentic_tool_ms``: median wall time of ``import akgentic.tool`` in fresh
  interpreters (every installed card plugin stays unloaded: ``import_plugins_loaded``).
- ``notification``: 1,000 ``schedule`` asks to a real ``#NotificationTool``, then
  delivery jitter (arrival minus due time) of entries due within a few seconds, with
  the shipped 1-second tick.
- ``mcp``: one ``echo`` call round trip through the card's guarded toolset, once the
  connection is up, to a real MCP server over stdio and over streamable HTTP.
- ``skill`` / ``metadata``: the per-turn cost of their system-prompt callables.

A section whose plugin is not installed is reported as ``{"skipped": "<reason>"}``.
- ``planning``: 1,000 single-task creates, then single-task updates and hybrid searches
  on a real ``#PlanningTool`` (in-memory store, hashing embedder), and the characters
  of one agent's context state at 100 and 1,000 tasks: full, and the delta after one
  change.
- ``knowledge_graph``: 10,000 entities and 10,000 relations in batches of 500, then
  one-entity adds, keyword and hybrid searches, and the summary's size at 1,000 and
  10,000 entities (same types and roots).
- ``rag``: workspace retrieval (``bench/tools_rag.py``): 1,000 and 10,000 small files
  indexed and drained with the hashing embedder, a 100-page PDF, the re-index after
  one file of the 10,000 changed, keyword-only and hybrid search p50 at 10,000 files.

Other card issues add their own section to this object. Run:
``.venv/bin/python bench/tools.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

Section = dict[str, Any]

_ECHO_SERVER = '''
import sys
try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server
server = Server("bench")

@server.tool()
def echo(text: str) -> str:
    """Echo."""
    return text

if len(sys.argv) > 1:
    server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
else:
    server.run()
'''


def _plugin(module: str) -> Any:
    """The plugin module, or None when its distribution is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def _wait(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            return False
        pause.wait(0.01)
    return True


# ------------------------------------------------------------------ import


def bench_import(runs: int) -> Section:
    code = (
        "import sys, time\n"
        "t = time.perf_counter()\n"
        "import akgentic.tool\n"
        "ms = (time.perf_counter() - t) * 1000\n"
        "names = ('akgentic_search', 'akgentic_mcp', 'akgentic_metadata', "
        "'akgentic_notification', 'akgentic_skill', 'akgentic_model', 'akgentic.plugins.host')\n"
        "print(ms, sum(1 for n in names if n in sys.modules))\n"
    )
    timings: list[float] = []
    loaded = 0
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
        ).stdout.split()
        timings.append(float(out[0]))
        loaded = max(loaded, int(out[1]))
    return {
        "import_akgentic_tool_ms": round(statistics.median(timings), 1),
        "import_plugins_loaded": loaded,
    }


# ------------------------------------------------------------ notification


def bench_notification(entries: int, jitter_entries: int) -> Section:
    notification = _plugin("akgentic_notification")
    if notification is None:
        return {"skipped": "akgentic-notification is not installed"}
    from akgentic.agent.messages import AgentMessage
    from akgentic.core import ActorSystem, BaseConfig, BaseState, Orchestrator
    from akgentic.core.agent import Akgent

    actor_module = importlib.import_module("akgentic_notification.actor")
    models = importlib.import_module("akgentic_notification.models")
    arrivals: list[tuple[str, datetime]] = []
    lock = threading.Lock()

    class Recipient(Akgent[BaseConfig, BaseState]):
        def receiveMsg_AgentMessage(self, message: AgentMessage) -> None:
            with lock:
                arrivals.append((message.content, datetime.now(UTC)))

    system = ActorSystem()
    try:
        orchestrator = system.createActor(
            Orchestrator, config=BaseConfig(name="@O", role="Orchestrator")
        )
        team = system.proxy_ask(orchestrator, Orchestrator)
        # One owner holds at most MAX_PENDING_PER_OWNER entries: spread the load.
        per_owner = models.MAX_PENDING_PER_OWNER
        owners = [
            team.createActor(Recipient, config=BaseConfig(name=f"@Owner{i}", role="Owner"))
            for i in range(-(-entries // per_owner) + 1)
        ]
        owner = owners[-1]
        config = models.NotificationConfig(name=models.NOTIFICATION_ACTOR_NAME, role="ToolActor")
        address = team.getChildrenOrCreate(actor_module.NotificationActor, config=config)
        actor = system.proxy_ask(address, actor_module.NotificationActor, timeout=30)
        path = models.DEFAULT_MESSAGE_CLASS
        started = time.perf_counter()
        for index in range(entries):
            actor.schedule(owners[index // per_owner], f"far {index}", 3600, path)
        schedule_ms = (time.perf_counter() - started) * 1000
        due: dict[str, datetime] = {}
        for index in range(jitter_entries):
            content = f"soon {index}"
            actor.schedule(owner, content, 1 + index % 3, path)
        for entry in actor.list_for(None):
            if entry.content.startswith("soon "):
                due[entry.content] = entry.fire_at
        _wait(lambda: len(arrivals) >= jitter_entries, timeout=30)
        with lock:
            jitter = [(at - due[c]).total_seconds() * 1000 for c, at in arrivals if c in due]
    finally:
        system.shutdown(timeout=10)
    return {
        "schedule_1000_ms": round(schedule_ms * 1000 / entries, 1),
        "jitter_ms_p50": round(_percentile(jitter, 0.5), 1) if jitter else None,
        "jitter_ms_p99": round(_percentile(jitter, 0.99), 1) if jitter else None,
        "delivered": len(jitter),
        "tick_s": models.TICK_INTERVAL_S,
    }


# --------------------------------------------------------------------- mcp


async def _call_round_trips(card: Any, calls: int) -> tuple[float, list[float]]:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    (toolset,) = card.get_toolsets()
    ctx: RunContext[None] = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    started = time.perf_counter()
    async with toolset:
        tools = await toolset.get_tools(ctx)
        connect_ms = (time.perf_counter() - started) * 1000
        echo = tools["echo"]
        timings: list[float] = []
        for index in range(calls):
            begun = time.perf_counter()
            await toolset.call_tool("echo", {"text": f"t{index}"}, ctx, echo)
            timings.append((time.perf_counter() - begun) * 1000)
    return connect_ms, timings


def bench_mcp(calls: int) -> Section:
    mcp_card = _plugin("akgentic_mcp")
    if mcp_card is None:
        return {"skipped": "akgentic-mcp is not installed"}
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "echo_server.py"
        script.write_text(_ECHO_SERVER)
        stdio = mcp_card.MCPTool(
            connection=mcp_card.MCPStdioConnectionConfig(
                stdio_command=sys.executable, stdio_args=[str(script)], timeout=120
            )
        )
        connect_ms, stdio_calls = asyncio.run(_call_round_trips(stdio, calls))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        child = subprocess.Popen(
            [sys.executable, str(script), str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:

            def listening() -> bool:
                with socket.socket() as probe:
                    return probe.connect_ex(("127.0.0.1", port)) == 0

            _wait(listening, timeout=120)
            http = mcp_card.MCPTool(
                connection=mcp_card.MCPHTTPConnectionConfig(url=f"http://127.0.0.1:{port}/mcp")
            )
            _http_connect, http_calls = asyncio.run(_call_round_trips(http, calls))
        finally:
            child.terminate()
            child.wait(10)
    return {
        "stdio_connect_ms": round(connect_ms, 1),
        "stdio_call_ms_p50": round(statistics.median(stdio_calls), 2),
        "http_call_ms_p50": round(statistics.median(http_calls), 2),
        "calls": calls,
    }


# ----------------------------------------------------------- skill, metadata


def _per_call_us(func: Callable[[], object], repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        func()
    return (time.perf_counter() - started) * 1e6 / repeat


def bench_skill(skills: int) -> Section:
    skill = _plugin("akgentic_skill")
    if skill is None:
        return {"skipped": "akgentic-skill is not installed"}
    entries = [
        skill.SkillEntry(
            name=f"skill-{index}", description=f"What skill {index} is for.", content="x" * 4000
        )
        for index in range(skills)
    ]
    card = skill.SkillTool(skills=skill.Skills(skills=entries))
    (prompt,) = card.get_system_prompts()
    (use_skill,) = card.get_tools()
    return {
        "skills": skills,
        "prompt_us_per_turn": round(_per_call_us(prompt, 10_000), 2),
        "prompt_chars": len(prompt()),
        "use_skill_us": round(_per_call_us(lambda: use_skill(f"skill-{skills - 1}"), 10_000), 2),
    }


def bench_metadata() -> Section:
    metadata = _plugin("akgentic_metadata")
    if metadata is None:
        return {"skipped": "akgentic-metadata is not installed"}
    from pydantic import BaseModel

    from akgentic.core import ActorSystem, BaseConfig, Orchestrator
    from akgentic.core.actor_address import ActorAddress
    from akgentic.tool.testing import RecordingObserver

    class Business(BaseModel):
        fiscal_year: int
        engagement: str

    class Member(RecordingObserver):
        def __init__(self, system: ActorSystem, orchestrator: ActorAddress) -> None:
            super().__init__()
            self._system, self._orchestrator = system, orchestrator

        @property
        def orchestrator(self) -> ActorAddress:
            return self._orchestrator

        def proxy_ask(
            self, actor: ActorAddress, actor_type: Any = None, timeout: Any = None
        ) -> Any:
            return self._system.proxy_ask(actor, actor_type, timeout=timeout)

    system = ActorSystem()
    try:
        address = system.createActor(Orchestrator, config=BaseConfig(name="@O", role="O"))
        system.proxy_ask(address, Orchestrator).set_metadata(
            Business(fiscal_year=2025, engagement="Audit")
        )
        member = Member(system, address)
        card = metadata.MetadataTool(
            render_metadata=metadata.RenderMetadata(
                template="FY {fiscal_year}, {engagement}", header="Team context"
            )
        ).observer(member)
        (prompt,) = card.get_system_prompts()
        started = time.perf_counter()
        prompt()
        first_ms = (time.perf_counter() - started) * 1000
        cached_us = _per_call_us(prompt, 10_000)
    finally:
        system.shutdown(timeout=10)
    return {"first_render_ms": round(first_ms, 2), "prompt_us_per_turn": round(cached_us, 2)}


def _board_team() -> tuple[Any, Any]:
    """A real actor system with an orchestrator, and the orchestrator's proxy."""
    from akgentic.core import ActorSystem, BaseConfig, Orchestrator

    system = ActorSystem()
    orchestrator = system.createActor(
        Orchestrator, config=BaseConfig(name="@O", role="Orchestrator")
    )
    return system, system.proxy_ask(orchestrator, Orchestrator)


def _hashing_store(team: Any) -> Any:
    from akgentic.vector import VectorStoreParam, ensure_store_actor

    param = VectorStoreParam(embedding_provider="hashing", embedding_model="hashing", dimension=256)
    ensure_store_actor(param, team)
    return param


def bench_planning(tasks: int, probes: int) -> Section:
    """Create/update/search on a real ``#PlanningTool`` with the hashing embedder, and the
    characters of the context state (full, and the delta after one change)."""
    if _plugin("akgentic_planning") is None:
        return {"skipped": "akgentic-planning is not installed"}
    planning = importlib.import_module("akgentic_planning")
    plan_actor = importlib.import_module("akgentic_planning.actor").PlanActor
    build_state = importlib.import_module("akgentic_planning.state").build_state

    from akgentic.core.proxy import ProxyWrapper

    system, team = _board_team()
    try:
        config = planning.PlanConfig(
            name="#PlanningTool", role="ToolActor", vector_store=_hashing_store(team)
        )
        board = ProxyWrapper(team.getChildrenOrCreate(plan_actor, config=config), timeout=60)
        words = ["deploy", "review", "write", "test", "ship", "plan", "fix", "document"]
        chars: Section = {}
        started = time.perf_counter()
        for i in range(tasks):
            owner = "@Me" if i % 10 == 0 else f"@Member{i % 7}"
            text = f"{words[i % 8]} part {i} of the {words[(i * 3) % 8]} work"
            create = planning.TaskCreate(id=i, description=text, owner=owner)
            board.update_planning(planning.UpdatePlan(create_tasks=[create]), "@Me")
            if i + 1 in (100, tasks):
                tasks_now = board.get_tasks()
                full = build_state(tasks_now, "@Me", True)
                changed = [
                    t.model_copy(update={"status": "started"}) if t.id == 0 else t
                    for t in tasks_now
                ]
                delta = build_state(changed, "@Me", True).render_delta(full) or ""
                chars[f"full_chars_{i + 1}"] = len(full.render_full())
                chars[f"delta_chars_after_one_change_{i + 1}"] = len(delta)
        create_ms = (time.perf_counter() - started) * 1000
        updates = []
        for i in range(probes):
            status = "started" if i % 2 == 0 else "pending"
            change = planning.TaskUpdate(id=(i * 37) % tasks, status=status)
            plan = planning.UpdatePlan(update_tasks=[change])
            began = time.perf_counter()
            board.update_planning(plan, "@Me")
            updates.append((time.perf_counter() - began) * 1000)
        searches = []
        for i in range(probes):
            began = time.perf_counter()
            board.search(planning.SearchRequest(query=f"{words[i % 8]} work", mode="hybrid"))
            searches.append((time.perf_counter() - began) * 1000)
    finally:
        system.shutdown(timeout=10)
    return {
        f"create_{tasks}_ms": round(create_ms, 1),
        f"create_one_ms_{tasks}": round(create_ms / tasks, 3),
        f"update_ms_{tasks}": round(statistics.median(updates), 3),
        f"search_p50_ms_{tasks}": round(statistics.median(searches), 3),
        **chars,
    }


def bench_knowledge_graph(entities: int, probes: int) -> Section:
    """Bulk adds, one-entity adds, keyword and hybrid search at ``entities``, and the
    summary's size at 1,000 and at ``entities`` (same types and roots)."""
    if _plugin("akgentic_knowledge_graph") is None:
        return {"skipped": "akgentic-knowledge-graph is not installed"}
    kg = importlib.import_module("akgentic_knowledge_graph")
    graph_actor = importlib.import_module("akgentic_knowledge_graph.actor").KnowledgeGraphActor

    from akgentic.core.proxy import ProxyWrapper

    system, team = _board_team()
    types = ["person", "company", "project", "document"]
    summary: Section = {}
    try:
        config = kg.KnowledgeGraphConfig(
            name="#KnowledgeGraphTool", role="ToolActor", vector_store=_hashing_store(team)
        )
        graph = ProxyWrapper(team.getChildrenOrCreate(graph_actor, config=config), timeout=120)
        batch = 500
        started = time.perf_counter()
        for start in range(0, entities, batch):
            names = range(start, min(entities, start + batch))
            graph.update_graph(
                kg.ManageGraph.model_validate(
                    {
                        "create_entities": [
                            {
                                "name": f"E{i}",
                                "entity_type": types[i % 4],
                                "description": f"item {i} about topic{i % 97}",
                                "is_root": i < 3,
                            }
                            for i in names
                        ],
                        "create_relations": [
                            {
                                "from_entity": f"E{i}",
                                "to_entity": f"E{(i * 7) % (i + 1)}",
                                "relation_type": "links" if i % 2 else "cites",
                            }
                            for i in names
                        ],
                    }
                )
            )
            if start + batch == 1000:
                summary["summary_chars_1000"] = len(graph.summary(True, True).render_full())
        add_ms = (time.perf_counter() - started) * 1000
        summary[f"summary_chars_{entities}"] = len(graph.summary(True, True).render_full())
        adds = []
        for i in range(probes):
            one = kg.ManageGraph.model_validate(
                {
                    "create_entities": [
                        {"name": f"X{i}", "entity_type": "person", "description": f"probe {i}"}
                    ]
                }
            )
            began = time.perf_counter()
            graph.update_graph(one)
            adds.append((time.perf_counter() - began) * 1000)
        keyword, hybrid = [], []
        for i in range(probes):
            began = time.perf_counter()
            graph.search(kg.SearchQuery(query=f"topic{i % 97}", mode="keyword"))
            keyword.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            graph.search(kg.SearchQuery(query=f"about topic{i % 97}", mode="hybrid"))
            hybrid.append((time.perf_counter() - began) * 1000)
    finally:
        system.shutdown(timeout=10)
    return {
        f"add_{entities}_entities_and_relations_ms": round(add_ms, 1),
        f"add_one_ms_{entities}": round(statistics.median(adds), 3),
        f"search_p50_ms_{entities}": round(statistics.median(keyword), 3),
        f"hybrid_p50_ms_{entities}": round(statistics.median(hybrid), 3),
        **summary,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer runs and entries")
    options = parser.parse_args()
    quick = options.quick
    result: dict[str, Any] = {}
    result.update(bench_import(3 if quick else 7))
    result["notification"] = bench_notification(1000, 12 if quick else 40)
    result["mcp"] = bench_mcp(20 if quick else 100)
    result["skill"] = bench_skill(50)
    result["metadata"] = bench_metadata()
    result["planning"] = bench_planning(1000, 20 if quick else 50)
    result["knowledge_graph"] = bench_knowledge_graph(10_000, 20 if quick else 50)
    result.update(_sibling_sections("tools_workspace.py", "bench_workspace", quick))
    result.update(_sibling_sections("tools_rag.py", "bench_rag", quick))
    print(json.dumps(result))


def _sibling_sections(script: str, function: str, quick: bool) -> dict[str, Any]:
    """The sections that ``function`` of ``bench/{script}`` measures.

    The workspace card (``tools_workspace.py``, ``workspace.*``) and workspace retrieval
    (``tools_rag.py``, ``rag.*``) are measured by scripts of their own, loaded by path
    because the bench folder is not a package.
    """
    import importlib.util

    path = Path(__file__).with_name(script)
    spec = importlib.util.spec_from_file_location(f"akgentic_bench_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sections: dict[str, Any] = getattr(module, function)(quick)
    return sections


if __name__ == "__main__":
    main()
