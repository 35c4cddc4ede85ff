"""Virtual teams: what a live team costs, how fast a passivated one comes back, how many fit.

Prints one JSON object (its last line)::

    {"threads_per_live_team": ..., "rss_kib_per_live_team": ...,
     "activation_ms_p50": ..., "activation_ms_p99": ...,
     "stored_teams": N, "rss_mib_100000_stored": ...,
     "active_teams_held": ..., "resume_s_100000_events": null, "method": {...}}

(``resume_s_100000_events`` is measured by ``bench/resume.py``.)

Each part runs in a fresh child process (``--phase``), so one part's memory
and threads do not count in another's:

* ``live``: ``--live`` echo teams (``@Entry`` and ``@Echo``), created by a
  ``TeamManager`` on a SQLite store, each sent one message answered by a reply.
  ``rss_kib_per_live_team`` is the RSS growth over the teams, measured after the
  replies (``VmRSS`` of ``/proc/self/status``). ``threads_per_live_team`` is the
  thread count above the process's baseline, averaged over samples taken every
  50 ms through one 10 s message cycle (each team answering one message in it,
  spread over the cycle), divided by the teams; ``threads_per_live_team_at_rest``
  and ``threads_per_live_team_right_after_a_message`` are the two extremes.
* ``activation``: ``--activations`` passivated teams whose logs hold
  ``--log-events`` events (copied from a real echo team's log, written straight
  into the store as ``bench/team.py`` does) and a checkpoint after them, as
  passivation leaves it; each is activated once by
  ``TeamManager.activate``, timed from the call to the returned runtime.
* ``stored``: ``--stored`` passivated teams (a 12-event log each, written
  straight into a SQLite store with ``synchronous=normal``), then a fresh
  process opens the store with a ``TeamManager``, reads the ids of every stored
  team (``stored_team_ids``) and wakes one of them with a message:
  ``rss_mib_100000_stored`` is its RSS then (the name keeps the target's count;
  ``stored_teams`` says how many were run).
* ``held`` (only with ``--held N,N,...``): N live echo teams each sent a message
  every ``--period`` seconds (spread evenly) for two periods; the round trip is
  from ``TeamRuntime.send`` to the reply arriving back at ``@Entry``.
  ``active_teams_held`` is the largest N tried whose p99 stayed <= 100 ms.

A figure not measured is ``null``, with the reason under ``"missing"``.
Run: ``.venv/bin/python bench/virtual.py [--stored 100000] [--held 1000,2000,5000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from akgentic.core import ActorSystem, BaseConfig, BaseState
from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent import Akgent
from akgentic.core.agent_card import AgentCard
from akgentic.core.messages.message import UserMessage
from akgentic.team import (
    PersistedEvent,
    Process,
    SqliteEventStore,
    TeamCard,
    TeamCardMember,
    TeamManager,
    TeamRuntime,
    TeamStatus,
)
from akgentic.team.checkpoint import fold_log

HERE = Path(__file__).resolve()
RTT_BUDGET_MS = 100.0


class Replies:
    """When each reply came back to its team's entry point (keyed by message text)."""

    def __init__(self) -> None:
        self.sent: dict[str, float] = {}
        self.back: dict[str, float] = {}
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)

    def arrived(self, key: str) -> None:
        with self.changed:
            self.back[key] = time.perf_counter()
            self.changed.notify_all()

    def wait(self, keys: list[str], timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: all(k in self.back for k in keys), timeout)


REPLIES = Replies()


class VirtualEcho(Akgent[BaseConfig, BaseState]):
    """``@Echo`` answers every message to its sender; ``@Entry`` notes the answer's arrival."""

    def receiveMsg_UserMessage(self, message: UserMessage, sender: ActorAddress) -> None:
        if self.config.name == "@Entry":
            REPLIES.arrived(message.content)
        else:
            self.send(sender, UserMessage(content=message.content))


def card(passivate_after: float | None = None) -> TeamCard:
    def member(name: str) -> TeamCardMember:
        return TeamCardMember(
            card=AgentCard(
                agent_class=VirtualEcho,
                description=name,
                config=BaseConfig(name=name, role=name.strip("@")),
            )
        )

    return TeamCard(
        name="virtual-bench",
        entry_point=member("@Entry"),
        members=[member("@Echo")],
        message_types=[UserMessage],
        passivate_after=passivate_after,
    )


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def ask(runtime: TeamRuntime, key: str) -> None:
    REPLIES.sent[key] = time.perf_counter()
    runtime.send(key)


# -- phases -------------------------------------------------------------------


def phase_live(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    store = SqliteEventStore(work / "live.db", synchronous="normal")
    system = ActorSystem()
    manager = TeamManager(system, store, passivate_after=None, idle_delay=3600)
    # Warm-up team: imports, the writer pool, the shared clock are not a team's cost.
    warm = manager.create_team(card())
    ask(warm, "warm")
    assert REPLIES.wait(["warm"], 30)
    manager.stop_team(warm.id)
    base_threads = threading.active_count()
    base_rss = rss_kib()
    runtimes = []
    for i in range(args.live):
        runtime = manager.create_team(card())
        ask(runtime, f"hello {i}")
        runtimes.append(runtime)
    assert REPLIES.wait([f"hello {i}" for i in range(args.live)], 120)
    right_after = threading.active_count() - base_threads
    rss_per_team = (rss_kib() - base_rss) / args.live
    # One 10 s cycle: every team answers one message, spread evenly, sampled every 50 ms.
    samples: list[int] = []
    period = 10.0
    started = time.perf_counter()
    for i, runtime in enumerate(runtimes):
        due = started + period * i / len(runtimes)
        while (now := time.perf_counter()) < due:
            samples.append(threading.active_count() - base_threads)
            time.sleep(min(0.05, due - now))
        ask(runtime, f"cycle {i}")
    while time.perf_counter() < started + period:
        samples.append(threading.active_count() - base_threads)
        time.sleep(0.05)
    assert REPLIES.wait([f"cycle {i}" for i in range(args.live)], 60)
    time.sleep(3.0)  # past the actors' linger (2 s): what idle live teams hold
    at_rest = threading.active_count() - base_threads
    manager.stop_all()
    system.shutdown(timeout=30)
    store.close()
    return {
        "threads_per_live_team": round(sum(samples) / len(samples) / args.live, 3),
        "threads_per_live_team_at_rest": round(at_rest / args.live, 3),
        "threads_per_live_team_right_after_a_message": round(right_after / args.live, 3),
        "rss_kib_per_live_team": round(rss_per_team, 1),
        "live_teams": args.live,
    }


def template(store: SqliteEventStore) -> tuple[Process, list[PersistedEvent]]:
    """A real echo team's log: its starts, then the events of a few messages."""
    system = ActorSystem()
    manager = TeamManager(system, store, passivate_after=None)
    runtime = manager.create_team(card())
    for i in range(3):
        ask(runtime, f"template {i}")
    assert REPLIES.wait([f"template {i}" for i in range(3)], 30)
    assert runtime.wait_idle(30)
    manager.stop_team(runtime.id)
    system.shutdown(timeout=30)
    process = manager.get_team(runtime.id)
    assert process is not None
    return process, store.load_events(runtime.id)


def write_log(
    store: SqliteEventStore, process: Process, sample: list[PersistedEvent], size: int
) -> UUID:
    """A passivated team whose log holds ``size`` events cloned from ``sample``.

    The log ends with a checkpoint of those events, as passivation leaves it
    (:meth:`TeamManager.passivate_team` writes one before the team stops).
    """
    team_id = uuid4()
    head = [e for e in sample if type(e.event).__name__ == "StartMessage"]
    body = [e for e in sample if e not in head and type(e.event).__name__ != "EventMessage"]
    events: list[PersistedEvent] = []
    for sequence in range(1, size + 1):
        if sequence <= len(head):
            source = head[sequence - 1]
        else:
            source = body[(sequence - 1 - len(head)) % len(body)]
        events.append(source.model_copy(update={"team_id": team_id, "sequence": sequence}))
    checkpoint = fold_log(events).checkpoint(team_id)
    events.append(PersistedEvent(team_id=team_id, sequence=size + 1, event=checkpoint))
    for start in range(0, len(events), 5000):
        store.save_events(events[start : start + 5000])
    store.save_team(
        process.model_copy(
            update={"team_id": team_id, "status": TeamStatus.PASSIVATED, "owner": None}
        )
    )
    return team_id


def phase_activation(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    store = SqliteEventStore(work / "activation.db")
    process, sample = template(store)
    ids = [write_log(store, process, sample, args.log_events) for _ in range(args.activations)]
    system = ActorSystem()
    manager = TeamManager(system, store, passivate_after=None)
    times: list[float] = []
    for team_id in ids:
        started = time.perf_counter()
        runtime = manager.activate(team_id, timeout=60)
        times.append((time.perf_counter() - started) * 1000)
        key = f"after {team_id}"
        ask(runtime, key)
        assert REPLIES.wait([key], 30), "an activated team did not answer"
    manager.stop_all()
    system.shutdown(timeout=30)
    store.close()
    return {
        "activation_ms_p50": round(percentile(times, 0.50), 2),
        "activation_ms_p99": round(percentile(times, 0.99), 2),
        "activations": len(times),
        "log_events": args.log_events,
    }


def phase_write_stored(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    store = SqliteEventStore(work / "stored.db", synchronous="normal")
    process, sample = template(store)
    started = time.perf_counter()
    for _ in range(args.stored):
        write_log(store, process, sample, len(sample))
    store.close()
    return {"written": args.stored, "write_s": round(time.perf_counter() - started, 1)}


def phase_stored(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    before = rss_kib()
    store = SqliteEventStore(work / "stored.db", synchronous="normal")
    system = ActorSystem()
    manager = TeamManager(system, store)
    # What the process knows of the stored teams: their ids (records stay in the store).
    ids = store.stored_team_ids()
    passivated = len(ids) - 1  # the template team is stopped
    some = next(
        i
        for i in ids
        if (record := store.load_team(i)) is not None and record.status == TeamStatus.PASSIVATED
    )
    runtime = manager.send(some, "wake up")
    REPLIES.sent["wake up"] = time.perf_counter()
    assert REPLIES.wait(["wake up"], 60), "the woken team did not answer"
    rss = rss_kib()
    manager.stop_all()
    system.shutdown(timeout=30)
    store.close()
    del runtime
    return {
        "stored_teams": passivated,
        "rss_mib_100000_stored": round(rss / 1024, 1),
        "rss_mib_before_opening_the_store": round(before / 1024, 1),
    }


def phase_held(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    count, period = args.count, args.period
    store = SqliteEventStore(work / f"held-{count}.db", synchronous="normal")
    system = ActorSystem()
    manager = TeamManager(system, store, passivate_after=None, idle_delay=3600)
    created = time.perf_counter()
    runtimes = [manager.create_team(card()) for _ in range(count)]
    create_s = time.perf_counter() - created
    rtts: list[float] = []
    keys: list[str] = []
    started = time.perf_counter()
    for cycle in range(2):
        for i, runtime in enumerate(runtimes):
            due = started + period * (cycle + i / count)
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            key = f"{cycle}:{i}"
            keys.append(key)
            ask(runtime, key)
    complete = REPLIES.wait(keys, 120)
    for key in keys:
        if key in REPLIES.back:
            rtts.append((REPLIES.back[key] - REPLIES.sent[key]) * 1000)
    lost = len(keys) - len(rtts)
    # No stop of thousands of teams one by one: main() exits the child at once.
    return {
        "count": count,
        "create_s": round(create_s, 1),
        "rtt_ms_p50": round(percentile(rtts, 0.5), 2) if rtts else None,
        "rtt_ms_p99": round(percentile(rtts, 0.99), 2) if rtts else None,
        "unanswered": lost,
        "complete": complete,
    }


PHASES = {
    "live": phase_live,
    "activation": phase_activation,
    "write_stored": phase_write_stored,
    "stored": phase_stored,
    "held": phase_held,
}


def child(phase: str, args: argparse.Namespace, work: Path, **extra: Any) -> dict[str, Any]:
    command = [sys.executable, str(HERE), "--phase", phase, "--work", str(work)]
    for name in ("live", "activations", "log_events", "stored", "period"):
        command += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    for name, value in extra.items():
        command += [f"--{name}", str(value)]
    env = dict(os.environ)
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"phase {phase} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", type=int, default=200, help="live teams for threads and RSS")
    parser.add_argument("--activations", type=int, default=50)
    parser.add_argument("--log-events", type=int, default=1000)
    parser.add_argument("--stored", type=int, default=100_000, help="passivated teams stored")
    parser.add_argument("--held", default="", help="team counts to try, e.g. 1000,2000,5000")
    parser.add_argument("--period", type=float, default=10.0, help="seconds between messages")
    parser.add_argument(
        "--parts",
        default="live,activation,stored,held",
        help="which parts to run (comma-separated); the others report null",
    )
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase is not None:
        print(json.dumps(PHASES[args.phase](args, Path(args.work))), flush=True)
        if args.phase == "held":
            os._exit(0)  # its teams die with the process; their store is thrown away
        return
    missing: dict[str, str] = {
        "resume_s_100000_events": "measured by bench/resume.py",
    }
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="akgentic-virtual-") as tmp:
        work = Path(tmp)
        parts = {p.strip() for p in args.parts.split(",") if p.strip()}
        skipped = "not run (--parts)"
        if "live" in parts:
            out.update(child("live", args, work))
        else:
            out["threads_per_live_team"] = out["rss_kib_per_live_team"] = None
            missing["threads_per_live_team"] = missing["rss_kib_per_live_team"] = skipped
        if "activation" in parts:
            out.update(child("activation", args, work))
        else:
            out["activation_ms_p50"] = out["activation_ms_p99"] = None
            missing["activation_ms_p50"] = missing["activation_ms_p99"] = skipped
        if "stored" in parts and args.stored > 0:
            written = child("write_stored", args, work)
            out.update(child("stored", args, work))
            out["stored_write_s"] = written["write_s"]
        else:
            out["stored_teams"] = out["rss_mib_100000_stored"] = None
            missing["stored_teams"] = missing["rss_mib_100000_stored"] = skipped
        if "held" not in parts:
            args.held = ""
        held: list[dict[str, Any]] = []
        best: int | None = None
        for raw in [c for c in args.held.split(",") if c.strip()]:
            result = child("held", args, work, count=int(raw))
            held.append(result)
            p99 = result["rtt_ms_p99"]
            if result["unanswered"] or p99 is None or p99 > RTT_BUDGET_MS:
                break
            best = result["count"]
        out["active_teams_held"] = best
        out["held_runs"] = held
        if not held:
            missing["active_teams_held"] = "not run: pass --held N,N,... (slow on 2 cores)"
        elif best is None:
            missing["active_teams_held"] = "the smallest count tried missed the 100 ms p99"
    out["resume_s_100000_events"] = None
    out["missing"] = missing
    out["machine"] = {"cpus": os.cpu_count(), "loadavg": list(os.getloadavg())}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
