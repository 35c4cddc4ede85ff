"""Throughput of the akgentic actor hop versus a bare pykka actor.

Prints one JSON object: one-way throughput of UserMessages into a counting
Akgent inside an orchestrated team (telemetry on, one subscriber attached),
the same for a bare pykka ThreadingActor counting plain objects, the ask
round-trip latency (median and p99) and the ratio of the two throughputs.

Run: ``.venv/bin/python bench/actors.py [--messages N] [--asks N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from typing import Any

import pykka

from akgentic.core import ActorSystem, BaseConfig, BaseState, EventSubscriber, Orchestrator
from akgentic.core.agent import Akgent
from akgentic.core.messages.message import Message, UserMessage
from akgentic.core.messages.orchestrator import ProcessedMessage


class PlainCounter(pykka.ThreadingActor):
    """Bare pykka actor counting whatever it receives."""

    def __init__(self, target: int, done: threading.Event) -> None:
        super().__init__()
        self.count = 0
        self.target = target
        self.done = done

    def on_receive(self, message: Any) -> Any:
        self.count += 1
        if self.count == self.target:
            self.done.set()
        return self.count


class CountingAgent(Akgent[BaseConfig, BaseState]):
    """Akgent counting UserMessages."""

    def on_start(self) -> None:
        self.count = 0

    def receiveMsg_UserMessage(self, message: UserMessage) -> int:
        self.count += 1
        return self.count


class DrainSubscriber(EventSubscriber):
    """Counts ProcessedMessages and signals once ``target`` were seen."""

    def __init__(self) -> None:
        self.seen = 0
        self.target = -1
        self.done = threading.Event()

    def on_message(self, msg: Message) -> None:
        if isinstance(msg, ProcessedMessage):
            self.seen += 1
            if self.seen == self.target:
                self.done.set()


def bench_pykka(n: int) -> float:
    done = threading.Event()
    ref = PlainCounter.start(n, done)
    payloads = [object() for _ in range(n)]
    start = time.perf_counter()
    for payload in payloads:
        ref.tell(payload)
    done.wait(120)
    elapsed = time.perf_counter() - start
    ref.stop()
    return n / elapsed


def bench_akgentic(n: int, asks: int) -> tuple[float, list[float]]:
    system = ActorSystem()
    orchestrator = system.createActor(
        Orchestrator, config=BaseConfig(name="@Orchestrator", role="Orchestrator")
    )
    orch = system.proxy_ask(orchestrator, Orchestrator)
    subscriber = DrainSubscriber()
    orch.subscribe(subscriber)
    counter = orch.createActor(CountingAgent, config=BaseConfig(name="@Counter", role="Counter"))

    # Warm-up: builds deferred pydantic schemas and the dispatch cache.
    subscriber.target = 200
    for _ in range(200):
        system.tell(counter, UserMessage(content="warm-up"))
    subscriber.done.wait(60)

    subscriber.seen = 0
    subscriber.done.clear()
    subscriber.target = n
    messages = [UserMessage(content="hello") for _ in range(n)]
    start = time.perf_counter()
    for message in messages:
        system.tell(counter, message)
    subscriber.done.wait(300)
    elapsed = time.perf_counter() - start

    latencies: list[float] = []
    for _ in range(asks):
        message = UserMessage(content="ping")
        t0 = time.perf_counter()
        system.ask(counter, message)
        latencies.append(time.perf_counter() - t0)

    system.shutdown(timeout=10)
    return n / elapsed, latencies


def bench_bare_akgent(n: int) -> float:
    """The same counting Akgent as a root actor: no orchestrator, so no telemetry."""
    system = ActorSystem()
    counter = system.createActor(CountingAgent)
    for _ in range(200):
        system.tell(counter, UserMessage(content="warm-up"))
    system.ask(counter, UserMessage(content="sync"))
    messages = [UserMessage(content="hello") for _ in range(n)]
    start = time.perf_counter()
    for message in messages[:-1]:
        system.tell(counter, message)
    system.ask(counter, messages[-1])
    elapsed = time.perf_counter() - start
    system.proxy_ask(counter, CountingAgent).stop()
    system.shutdown(timeout=10)
    return n / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--asks", type=int, default=2000)
    args = parser.parse_args()

    pykka_rate = bench_pykka(args.messages)
    akgentic_rate, latencies = bench_akgentic(args.messages, args.asks)
    bare_rate = bench_bare_akgent(args.messages)
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    result = {
        "messages": args.messages,
        "subscribers": 1,
        "akgentic_msgs_per_s": round(akgentic_rate, 1),
        "pykka_msgs_per_s": round(pykka_rate, 1),
        "akgentic_no_telemetry_msgs_per_s": round(bare_rate, 1),
        "ask_latency_median_us": round(statistics.median(latencies) * 1e6, 1),
        "ask_latency_p99_us": round(p99 * 1e6, 1),
        "ratio_vs_pykka": round(akgentic_rate / pykka_rate, 3),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
