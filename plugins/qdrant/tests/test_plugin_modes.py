"""The installed ``akgentic-qdrant`` plugin: its two backend names and the URL modes.

Everything runs the real plugin through the real registry. Server mode talks to a
small HTTP server of this module on 127.0.0.1 that answers the one REST call a
connection makes (``GET /collections``): it proves the client speaks REST to the
host and port of the URL, sends the API key and connects eagerly. It is not a Qdrant
server, so nothing past connecting is verified in server mode here; the backend
itself runs the contract kit on qdrant-client's real local engines.
"""

from __future__ import annotations

import importlib.metadata
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from akgentic_qdrant.backend import QdrantBackend
from akgentic_qdrant.connect import connect_url

from akgentic.vector import VectorEntry, VectorStoreParam, bind_store, close_all
from akgentic.vector.registry import BackendContext, default_backend, get_backend_spec

PARAM = VectorStoreParam(
    backend="qdrant-edge", dimension=3, embedding_provider="hashing", embedding_model="hashing"
)
VARIABLES = ("AKGENTIC_QDRANT_URL", "AKGENTIC_QDRANT_EDGE_PATH", "AKGENTIC_WEAVIATE_URL")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield
    close_all()  # shared clients and edge storages opened by a test go with it


def test_qdrant_edge_is_a_registered_backend_of_the_plugin() -> None:
    spec = get_backend_spec("qdrant-edge")
    assert (spec.default_priority, spec.distribution) == (5, "akgentic-qdrant[edge]")
    assert spec.persists_in_actor_state is False and spec.needs_actor is False
    assert get_backend_spec("qdrant").default_priority == 10


def test_the_edge_path_makes_qdrant_edge_the_default_and_a_url_outranks_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert default_backend() == "inmemory"
    monkeypatch.setenv("AKGENTIC_QDRANT_EDGE_PATH", str(tmp_path))
    assert default_backend() == "qdrant-edge"
    monkeypatch.setenv("AKGENTIC_QDRANT_URL", ":memory:")
    assert default_backend() == "qdrant"


def test_naming_qdrant_edge_without_its_path_fails_the_bind_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AKGENTIC_QDRANT_EDGE_PATH", "  ")  # exported but blank is unset
    with pytest.raises(ValueError, match="AKGENTIC_QDRANT_EDGE_PATH is not set"):
        bind_store("PlanningTool", PARAM)


def test_the_edge_factory_persists_rows_across_a_close_of_every_client(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AKGENTIC_QDRANT_EDGE_PATH", str(tmp_path / "shards"))
    binding = bind_store("PlanningTool", PARAM)
    assert binding is not None
    spec = get_backend_spec("qdrant-edge")
    backend = spec.factory(BackendContext(PARAM, team_id="team-1"))
    backend.create_collection("planning", PARAM)
    backend.add(
        "planning", [VectorEntry(ref_type="task", ref_id="1", text="kept", vector=[1, 0, 0])]
    )
    close_all()
    again = spec.factory(BackendContext(PARAM, team_id="team-1"))
    again.create_collection("planning", PARAM)
    hits = again.search("planning", [1.0, 0.0, 0.0], 1).hits
    assert [(h.ref_id, h.text) for h in hits] == [("1", "kept")]
    assert (tmp_path / "shards" / "planning").is_dir()


def test_memory_and_file_urls_share_one_engine_per_location(tmp_path: Path) -> None:
    memory = connect_url(":memory:")
    assert connect_url(" :memory: ") is memory
    assert memory.lock is not None  # local engines are used under a lock
    on_disk = connect_url(f"file://{tmp_path / 'a'}")
    assert connect_url(f"file://{tmp_path / 'a'}") is on_disk
    assert connect_url(f"file://{tmp_path / 'b'}") is not on_disk
    backend = QdrantBackend(on_disk.client, "team-1", lock=on_disk.lock)
    backend.create_collection("planning", PARAM.model_copy(update={"backend": "qdrant"}))
    assert "planning" in QdrantBackend(on_disk.client, None, lock=on_disk.lock).list_collections()


@pytest.mark.parametrize("url", ["ftp://host", "file://", "host:6333", "grpc://h:6334"])
def test_a_url_of_no_known_mode_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="AKGENTIC_QDRANT_URL"):
        connect_url(url)


class _Collections(BaseHTTPRequestHandler):
    """A Qdrant REST server with no collections.

    ``GET /`` is qdrant-client's version check, which it sends from a thread of its own
    at a moment of its choosing: it is answered with the client's own version (so no
    "Failed to obtain server version" warning fires in that thread) and kept out of
    ``seen``, which records the requests the plugin itself makes.
    """

    seen: list[tuple[str, str | None]] = []

    def do_GET(self) -> None:
        if self.path == "/":
            version = importlib.metadata.version("qdrant-client")
            payload: dict[str, object] = {"title": "qdrant", "version": version}
        else:
            self.seen.append((self.path, self.headers.get("api-key")))
            payload = {"result": {"collections": []}, "status": "ok", "time": 0.0}
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads ``seen`` instead."""


@pytest.fixture
def rest_server() -> Iterator[tuple[int, list[tuple[str, str | None]]]]:
    seen: list[tuple[str, str | None]] = []
    handler = type("Handler", (_Collections,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], seen
    server.shutdown()
    server.server_close()


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_a_server_url_connects_over_rest_eagerly_with_the_key_once_per_key(
    rest_server: tuple[int, list[tuple[str, str | None]]],
) -> None:
    port, seen = rest_server
    connection = connect_url(f"http://127.0.0.1:{port}/", api_key="sekret")
    assert seen and all(path.startswith("/collections") for path, _ in seen)
    assert {key for _, key in seen} == {"sekret"}
    assert connection.lock is None  # a server serves threads itself
    calls = len(seen)
    assert connect_url(f"http://127.0.0.1:{port}", api_key="sekret") is connection
    assert len(seen) == calls  # one client per key: no second connect


@pytest.mark.filterwarnings("ignore:Failed to obtain server version")
def test_an_unreachable_server_fails_at_connect_and_is_not_cached() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for _ in range(2):
        with pytest.raises(Exception):  # noqa: B017 - the client's own connection error, of no fixed class
            connect_url(f"http://127.0.0.1:{port}")
