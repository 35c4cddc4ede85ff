"""Shared clients: one per normalised key, connected once, failures not cached."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from akgentic.vector import ClusterKey, close_all, get_client


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    close_all()
    yield
    close_all()


def test_spellings_of_one_url_give_one_key_and_the_repr_hides_the_key() -> None:
    a = ClusterKey.from_url("weaviate", "http://LOCALHOST:8080/")
    b = ClusterKey.from_url("weaviate", "http://localhost:8080")
    assert a == b
    assert ClusterKey.from_url("qdrant", "http://h", default_port=6333) == ClusterKey.from_url(
        "qdrant", "http://h:6333/some/path"
    )
    secret = ClusterKey.from_url("qdrant", "https://h", "s3cr3t-key")
    assert secret.secure and secret.port == 443
    assert "s3cr3t-key" not in repr(secret)
    assert ClusterKey.from_url("qdrant", "http://h", "").api_key is None


class Client:
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_sixteen_threads_asking_at_once_connect_once() -> None:
    calls: list[int] = []
    barrier = threading.Barrier(16)
    results: list[Client] = []

    def connect() -> Client:
        calls.append(1)
        return Client()

    def ask() -> None:
        barrier.wait(10)
        results.append(get_client(ClusterKey.local("x", ":memory:"), connect))

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(calls) == 1
    assert len({id(r) for r in results}) == 1


def test_a_failed_connect_is_retried_and_close_all_is_idempotent() -> None:
    key = ClusterKey.local("x", "/tmp/nowhere")
    attempts: list[int] = []

    def flaky() -> Client:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("down")
        return Client()

    with pytest.raises(ConnectionError):
        get_client(key, flaky)
    client = get_client(key, flaky)
    assert len(attempts) == 2
    close_all()
    close_all()
    assert client.closed == 1
    assert get_client(key, flaky) is not client


def test_a_failing_close_is_logged_and_the_others_still_close(
    caplog: pytest.LogCaptureFixture,
) -> None:
    good = Client()

    def bad_close(_client: object) -> None:
        raise RuntimeError("boom")

    get_client(ClusterKey.local("x", "a"), Client, close=bad_close)
    get_client(ClusterKey.local("x", "b"), lambda: good)
    close_all()
    assert good.closed == 1
    assert "closing the x client" in caplog.text
