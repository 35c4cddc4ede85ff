"""Throughput of the akgentic actor hop versus a bare pykka actor.

Prints one JSON object: one-way throughput of UserMessages into a counting
Akgent inside an orchestrated team (telemetry on, one subscriber attached),
the same for a bare pykka ThreadingActor counting plain objects, the ask
round-trip latency (median and p99) and the ratio of the two throughputs.

Method: both sides are measured the same way, in this one process. After a
warm-up run of each, ``--runs`` timed runs of each side alternate (the order
flips every round, so neither side always runs on a "fresher" machine). Every
run starts a fresh actor (or team), pre-builds its payloads, collects garbage,
then times from the first ``tell`` until the last message was fully handled
(for akgentic: until the subscriber saw its ProcessedMessage). The sender pops
its payloads as it goes, so the harness itself keeps nothing alive on either
side. The reported throughputs are the medians; ``*_runs_msgs_per_s`` lists every
run and ``*_spread`` is (max - min) / median. ``ratio_vs_pykka`` is the ratio
of the medians.

Run: ``.venv/bin/python bench/actors.py [--messages N] [--runs R] [--asks N]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

import pykka

from akgentic.core import ActorSystem, BaseConfig, BaseState, EventSubscriber, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent import Akgent
from akgentic.core.messages.message import Message, UserMessage
from akgentic.core.messages.orchestrator import ProcessedMessage

WAIT = 300.0


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

    def expect(self, n: int) -> None:
        self.seen = 0
        self.done.clear()
        self.target = n


def _timed_drain(payloads: list[Any], tell: Callable[[Any], None], done: threading.Event) -> float:
    """Seconds from the first tell until ``done``; empties ``payloads`` on the way."""
    payloads.reverse()
    pop = payloads.pop
    gc.collect()
    start = time.perf_counter()
    while payloads:
        tell(pop())
    if not done.wait(WAIT):
        raise RuntimeError("the run did not drain in time")
    return time.perf_counter() - start


def run_pykka(n: int) -> float:
    """One run: msgs/s of a bare pykka actor counting ``n`` plain objects."""
    done = threading.Event()
    ref = PlainCounter.start(n, done)
    try:
        return n / _timed_drain([object() for _ in range(n)], ref.tell, done)
    finally:
        ref.stop()


def _start_team(system: ActorSystem) -> tuple[ActorAddress, DrainSubscriber]:
    orchestrator = system.createActor(
        Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
    )
    orch = system.proxy_ask(orchestrator, Orchestrator)
    subscriber = DrainSubscriber()
    orch.subscribe(subscriber)
    counter = orch.createActor(CountingAgent, config=BaseConfig(name="@Counter", role="Counter"))
    return counter, subscriber


def run_akgentic(n: int) -> float:
    """One run: msgs/s of UserMessages through an orchestrated, subscribed counting Akgent."""
    system = ActorSystem()
    try:
        counter, subscriber = _start_team(system)
        subscriber.expect(20)  # the team is up and telemetry flows
        for _ in range(20):
            system.tell(counter, UserMessage(content="warm-up"))
        subscriber.done.wait(WAIT)
        subscriber.expect(n)
        payloads = [UserMessage(content="hello") for _ in range(n)]
        return n / _timed_drain(payloads, lambda m: system.tell(counter, m), subscriber.done)
    finally:
        system.shutdown(timeout=10)


def run_bare_akgent(n: int) -> float:
    """One run: the same counting Akgent as a root actor (no orchestrator, no telemetry)."""
    system = ActorSystem()
    try:
        counter = system.createActor(CountingAgent)
        system.ask(counter, UserMessage(content="sync"))
        done = threading.Event()
        last = UserMessage(content="last")
        payloads: list[Any] = [UserMessage(content="hello") for _ in range(n - 1)]

        def tell(message: Any) -> None:
            system.tell(counter, message)
            if not payloads:  # the last one: wait for its answer, then signal
                system.ask(counter, last)
                done.set()

        rate = n / _timed_drain(payloads, tell, done)
        system.proxy_ask(counter, CountingAgent).stop()
        return rate
    finally:
        system.shutdown(timeout=10)


def ask_latencies(asks: int) -> list[float]:
    """Round trips of ``system.ask`` to the orchestrated counting Akgent, in seconds."""
    system = ActorSystem()
    try:
        counter, _ = _start_team(system)
        for _ in range(min(200, asks)):
            system.ask(counter, UserMessage(content="warm-up"))
        messages = [UserMessage(content="ping") for _ in range(asks)]
        gc.collect()
        latencies: list[float] = []
        for message in messages:
            t0 = time.perf_counter()
            system.ask(counter, message)
            latencies.append(time.perf_counter() - t0)
        return latencies
    finally:
        system.shutdown(timeout=10)


def _summary(rates: list[float]) -> tuple[float, float]:
    median = statistics.median(rates)
    return median, (max(rates) - min(rates)) / median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--asks", type=int, default=2000)
    args = parser.parse_args()
    n, runs = args.messages, args.runs
    if n < 2 or runs < 1:
        parser.error("needs --messages >= 2 and --runs >= 1")

    run_pykka(min(n, 5000))  # warm-up: imports, thread start-up, schema builds
    run_akgentic(min(n, 5000))
    pykka_rates: list[float] = []
    akgentic_rates: list[float] = []
    for i in range(runs):
        order = [(run_pykka, pykka_rates), (run_akgentic, akgentic_rates)]
        for run, rates in order if i % 2 == 0 else reversed(order):
            rates.append(run(n))
    bare_rates = [run_bare_akgent(n) for _ in range(3)]
    latencies = sorted(ask_latencies(args.asks))
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]

    pykka_rate, pykka_spread = _summary(pykka_rates)
    akgentic_rate, akgentic_spread = _summary(akgentic_rates)
    result = {
        "messages": n,
        "runs": runs,
        "subscribers": 1,
        "akgentic_msgs_per_s": round(akgentic_rate, 1),
        "pykka_msgs_per_s": round(pykka_rate, 1),
        "akgentic_no_telemetry_msgs_per_s": round(statistics.median(bare_rates), 1),
        "ask_latency_median_us": round(statistics.median(latencies) * 1e6, 1),
        "ask_latency_p99_us": round(p99 * 1e6, 1),
        "ratio_vs_pykka": round(akgentic_rate / pykka_rate, 3),
        "akgentic_runs_msgs_per_s": [round(r) for r in akgentic_rates],
        "pykka_runs_msgs_per_s": [round(r) for r in pykka_rates],
        "akgentic_spread": round(akgentic_spread, 3),
        "pykka_spread": round(pykka_spread, 3),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
