"""Deferred results on real actors: the seven rules, teardown and the caller's poll."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pykka
import pytest

from akgentic.core import ActorSystem, BaseConfig, BaseState, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.core.orchestrator import STOP_TIMEOUT
from akgentic.testing.waiting import wait_until
from akgentic.tool.core.deferred import (
    CACHE_CAPACITY,
    NEGATIVE_TTL,
    WORKER_PREFIX,
    WORKER_TIMEOUT,
    DeferredResultActor,
    DeferredWorker,
    poll_deferred,
)

BOUND = 10.0  # seconds any single wait in these tests may take before failing


@dataclass
class Job:
    """The payload: how the worker should behave, and a log of external calls."""

    text: str
    gate: threading.Event | None = None
    error: str | None = None
    returns_none: bool = False
    calls: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Summarizer(DeferredWorker[Job, str]):
    """Stands in for a slow external call (an LLM summary)."""

    def produce(self, payload: Job) -> str:
        with payload.lock:
            payload.calls.append(payload.text)
        if payload.gate is not None and not payload.gate.wait(self.timeout):
            raise TimeoutError(f"no answer within {self.timeout}s")
        if payload.error is not None:
            raise RuntimeError(payload.error)
        if payload.returns_none:
            return None  # type: ignore[return-value]
        return f"summary of {payload.text}"


class QuickSummarizer(Summarizer):
    """A worker with a short budget, for the teardown test."""

    timeout: ClassVar[float] = 0.5


class Summaries(DeferredResultActor[BaseConfig, BaseState, str, str]):
    """The cache actor under test."""

    def worker_class(self) -> type[DeferredWorker[Any, str]]:
        return Summarizer


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.value = 1000.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.value

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.value += seconds


CLOCK = FakeClock()


class ClockedSummaries(Summaries):
    """Reads time from the test's clock."""

    def now(self) -> float:
        return CLOCK()


class SmallSummaries(Summaries):
    """A cache holding two entries."""

    capacity: ClassVar[int] = 2


class QuickSummaries(Summaries):
    """Uses the short-budget worker."""

    def worker_class(self) -> type[DeferredWorker[Any, str]]:
        return QuickSummarizer


@pytest.fixture(autouse=True)
def _stop_all_actors() -> Iterator[None]:
    yield
    pykka.ActorRegistry.stop_all(block=True, timeout=BOUND)


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    actor_system = ActorSystem()
    yield actor_system
    actor_system.shutdown(timeout=5)


def start_cache(system: ActorSystem, cls: type[Summaries] = Summaries) -> Any:
    address = system.createActor(cls, config=BaseConfig(name="#Summaries", role="ToolActor"))
    return system.proxy_ask(address, cls, timeout=BOUND)


def fetch(cache: Any, key: str) -> str | None:
    return poll_deferred(lambda: cache.get(key), attempts=int(BOUND / 0.01), delay=0.01)


def test_a_requested_value_is_produced_by_a_worker_and_then_cached(system: ActorSystem) -> None:
    cache = start_cache(system)
    job = Job("report")
    assert cache.get("report") is None
    assert cache.request("report", job) is not None
    assert fetch(cache, "report") == "summary of report"
    assert cache.request("report", job) is None  # cached: nothing new starts
    assert job.calls == ["report"]


def test_the_worker_is_a_hash_named_tool_actor(system: ActorSystem) -> None:
    cache = start_cache(system)
    gate = threading.Event()
    worker: ActorAddress = cache.request("abc", Job("abc", gate=gate))
    try:
        assert worker.name == f"{WORKER_PREFIX}abc" and worker.name.startswith("#")
        assert worker.role == "ToolActor"
    finally:
        gate.set()


def test_the_worker_stops_itself_after_reporting(system: ActorSystem) -> None:
    cache = start_cache(system)
    worker: ActorAddress = cache.request("k", Job("k"))
    assert fetch(cache, "k") is not None
    wait_until(lambda: not worker.is_alive())


def test_three_callers_asking_for_one_key_cause_one_external_call(system: ActorSystem) -> None:
    cache = start_cache(system)
    job = Job("shared", gate=threading.Event())
    barrier = threading.Barrier(3)
    started: list[ActorAddress | None] = []
    answers: list[str | None] = []
    lock = threading.Lock()

    def caller() -> None:
        barrier.wait(BOUND)
        value = cache.get("shared")
        if value is None:
            spawned = cache.request("shared", job)
            with lock:
                started.append(spawned)
            value = fetch(cache, "shared")
        with lock:
            answers.append(value)

    threads = [threading.Thread(target=caller) for _ in range(3)]
    for thread in threads:
        thread.start()
    wait_until(lambda: len(started) == 3)
    assert cache.in_flight() == ["shared"]
    job.gate.set()  # type: ignore[union-attr]
    for thread in threads:
        thread.join(BOUND)
    assert answers == ["summary of shared"] * 3
    assert job.calls == ["shared"]
    assert sum(address is not None for address in started) == 1


def test_a_request_while_a_worker_is_in_flight_starts_nothing(system: ActorSystem) -> None:
    cache = start_cache(system)
    gate = threading.Event()
    assert cache.request("k", Job("k", gate=gate)) is not None
    assert cache.request("k", Job("k")) is None
    gate.set()
    assert fetch(cache, "k") == "summary of k"


def test_the_in_flight_mark_is_cleared_when_the_worker_reports(system: ActorSystem) -> None:
    cache = start_cache(system)
    cache.request("ok", Job("ok"))
    cache.request("bad", Job("bad", error="boom"))
    wait_until(lambda: cache.get("ok") is not None and cache.failure("bad") is not None)
    assert cache.in_flight() == []


def test_a_failure_is_cached_and_not_retried_on_every_poll(system: ActorSystem) -> None:
    cache = start_cache(system)
    job = Job("bad", error="service down")
    cache.request("bad", job)
    wait_until(lambda: cache.failure("bad") is not None)
    assert cache.failure("bad") == "RuntimeError: service down"
    assert cache.get("bad") is None
    for _ in range(3):
        assert cache.request("bad", job) is None
    assert job.calls == ["bad"]


def test_a_failure_may_be_retried_once_its_ttl_has_passed(system: ActorSystem) -> None:
    cache = start_cache(system, ClockedSummaries)
    job = Job("flaky", error="try later")
    cache.request("flaky", job)
    wait_until(lambda: cache.failure("flaky") is not None)
    CLOCK.advance(NEGATIVE_TTL - 1)
    assert cache.request("flaky", job) is None
    CLOCK.advance(2)
    assert cache.failure("flaky") is None
    job.error = None
    assert cache.request("flaky", job) is not None
    assert fetch(cache, "flaky") == "summary of flaky"
    assert job.calls == ["flaky", "flaky"]


def test_a_worker_returning_nothing_counts_as_a_failure(system: ActorSystem) -> None:
    cache = start_cache(system)
    cache.request("empty", Job("empty", returns_none=True))
    wait_until(lambda: cache.failure("empty") is not None)
    assert cache.failure("empty") == "the worker produced no value"


def test_a_worker_that_never_reports_stops_blocking_its_key_after_its_budget(
    system: ActorSystem,
) -> None:
    cache = start_cache(system, ClockedSummaries)
    gate = threading.Event()
    job = Job("stuck", gate=gate)
    first = cache.request("stuck", job)
    assert first is not None
    assert cache.request("stuck", job) is None
    CLOCK.advance(WORKER_TIMEOUT + 2)
    second = cache.request("stuck", job)
    gate.set()
    assert second is not None and second != first
    assert fetch(cache, "stuck") == "summary of stuck"


def test_the_cache_evicts_the_least_recently_used_entry(system: ActorSystem) -> None:
    cache = start_cache(system, SmallSummaries)
    cache.deliver("a", "A")
    cache.deliver("b", "B")
    assert cache.get("a") == "A"  # "a" is now the most recent
    cache.deliver("c", "C")
    assert cache.cached_keys() == ["a", "c"]
    assert cache.get("b") is None


def test_failures_occupy_cache_slots_too(system: ActorSystem) -> None:
    cache = start_cache(system, SmallSummaries)
    cache.deliver("a", "A")
    cache.fail("x", "boom")
    cache.fail("y", "boom")
    assert cache.cached_keys() == ["x", "y"]


def test_the_default_policy_constants() -> None:
    assert CACHE_CAPACITY == 128
    assert NEGATIVE_TTL == 60.0
    assert WORKER_PREFIX == "#defer-"


def test_the_worker_budget_is_below_the_stop_backstop() -> None:
    assert WORKER_TIMEOUT < STOP_TIMEOUT
    assert Summarizer.timeout == WORKER_TIMEOUT


def test_a_worker_budget_at_the_backstop_is_refused() -> None:
    with pytest.raises(TypeError, match="below the orchestrator's stop backstop"):

        class Patient(Summarizer):
            timeout: ClassVar[float] = STOP_TIMEOUT


def test_a_team_stop_with_a_worker_in_flight_ends_without_the_backstop(
    system: ActorSystem,
) -> None:
    orchestrator_address = system.createActor(
        Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
    )
    orchestrator = system.proxy_ask(orchestrator_address, Orchestrator, timeout=BOUND)
    cache_address = orchestrator.getChildrenOrCreate(
        QuickSummaries, config=BaseConfig(name="#Summaries", role="ToolActor")
    )
    cache = system.proxy_ask(cache_address, QuickSummaries, timeout=BOUND)
    job = Job("slow", gate=threading.Event())  # never released: the worker times out
    worker = cache.request("slow", job)
    assert worker is not None
    wait_until(lambda: job.calls == ["slow"])
    began = time.monotonic()
    stopped = orchestrator.stop()
    assert stopped.wait(BOUND)
    assert time.monotonic() - began < STOP_TIMEOUT / 3
    assert not worker.is_alive() and not cache_address.is_alive()


def test_poll_deferred_returns_the_first_value_found() -> None:
    answers = iter([None, None, "ready", "later"])
    waits: list[float] = []
    assert poll_deferred(lambda: next(answers), attempts=5, delay=0.4, wait=waits.append) == (
        "ready"
    )
    assert waits == [0.4, 0.4, 0.4]


def test_poll_deferred_gives_up_after_its_budget() -> None:
    calls: list[int] = []
    waits: list[float] = []

    def never() -> str | None:
        calls.append(1)
        return None

    assert poll_deferred(never, attempts=5, delay=0.4, wait=waits.append) is None
    assert len(calls) == 5 and sum(waits) == pytest.approx(2.0)


def test_a_caller_falls_back_to_a_degraded_answer_when_the_worker_is_slow(
    system: ActorSystem,
) -> None:
    cache = start_cache(system)
    gate = threading.Event()
    text = "a very long message that the summarizer has not finished with yet"
    summary = cache.get("m1")
    if summary is None:
        cache.request("m1", Job(text, gate=gate))
        summary = poll_deferred(lambda: cache.get("m1"), attempts=3, delay=0.01)
    if summary is None:
        summary = text[:20] + "…"
    gate.set()
    assert summary == "a very long message …"
