"""The MongoDB store against the shared EventStoreContract.

No MongoDB server can be installed on the machines these tests run on, so the
contract kit runs against **mongomock** (an in-memory imitation of pymongo,
``pip install mongomock``), through :mod:`akgentic_mongo.testing`. mongomock
keeps nothing once the process ends, so the kit's SIGKILL test is skipped for
it, and it has no transactions, so the store's standalone code paths are the
ones exercised. :class:`TestMongoServerContract` runs the whole kit, SIGKILL
test included, against a real server when ``AKGENTIC_TEST_MONGO_URL`` is set
(it is skipped otherwise).

Takeover (``take_over_team``): on mongomock the kit's in-process cases run —
the compare-and-set on the epoch, the old holder's writes refused, stale epochs
and unknown teams, handles racing from one epoch (mongomock applies each
``update_one`` under one lock, as a server applies it atomically). The
cross-process cases (owners frozen by SIGSTOP, an owner taken over while it
writes) and the replica-set path, where a fenced write and a takeover conflict
inside a transaction, are only verified against a real server.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from uuid import uuid4

import pytest
from akgentic_mongo import plugin
from akgentic_mongo.errors import SchemaNotInitialisedError, StoreUnavailableError
from akgentic_mongo.store import MongoEventStore, init_schema
from akgentic_mongo.testing import open_mongomock_store
from akgentic_mongo.url import parse_mongo_url

from akgentic.plugins import PluginInfo, get_registry
from akgentic.team.errors import DuplicateEventError, EventStoreError, InvalidStoreURLError
from akgentic.testing.event_store_contract import (
    ContractMetadata,
    EventStoreContract,
    contract_event,
    contract_process,
)


class TestMongomockContract(EventStoreContract):
    opener = "akgentic_mongo.testing:open_mongomock_store"
    native_paging = True
    supports_takeover = True
    supports_crash_test = False  # mongomock lives in the test process only

    @pytest.fixture
    def store_url(self, mock_url: str) -> str:
        return mock_url


@pytest.mark.mongo_server
class TestMongoServerContract(EventStoreContract):
    opener = "akgentic_mongo.store:MongoEventStore.from_url"
    native_paging = True
    supports_takeover = True

    @pytest.fixture
    def store_url(self, real_mongo_url: str) -> str:
        init_schema(real_mongo_url)
        return real_mongo_url


MONGO_HOSTILE = (
    "$where",
    "{'$where': 'sleep(1000)'}",
    '{"$ne": null}',
    "$ne",
    "$gt",
    "this.tenant == 'acme'",
    "a.b.c",
    ".",
    "$",
    "/acme/",
    "^acme$",
    ".*",
)


def test_query_operators_and_dotted_text_in_filters_are_matched_literally(mock_url: str) -> None:
    with open_mongomock_store(mock_url) as store:
        ids = {}
        for value in (*MONGO_HOSTILE, "acme", "contoso"):
            process = contract_process(metadata=ContractMetadata(tenant=value))
            store.save_team(process)
            ids[value] = process.team_id
        for value in MONGO_HOSTILE:
            found = [p.team_id for p in store.list_teams(metadata={"tenant": value})]
            assert found == [ids[value]], value
        for key in ("$where", "tenant.$ne", "metadata_indexes", "user_id", "a.b"):
            assert store.list_teams(metadata={key: "acme"}) == [], key
        assert store.list_teams(user_id="$ne") == []
        assert store.list_teams(user_id="alice.x") == []


def test_a_refused_batch_removes_what_it_had_inserted_and_names_the_taken_sequence(
    mock_url: str,
) -> None:
    with open_mongomock_store(mock_url) as store:
        team = uuid4()
        store.save_events([contract_event(team, 3)])
        with pytest.raises(DuplicateEventError) as info:
            store.save_events([contract_event(team, 1), contract_event(team, 2),
                               contract_event(team, 3), contract_event(team, 4)])  # fmt: skip
        assert info.value.sequence == 3
        with pytest.raises(DuplicateEventError):
            store.save_events([contract_event(team, 5), contract_event(team, 5)])
        assert [e.sequence for e in store.load_events(team)] == [3]
        assert store.get_max_sequence(team) == 3


def test_opening_an_uninitialised_database_says_to_run_the_initialiser() -> None:
    with pytest.raises(SchemaNotInitialisedError) as info:
        open_mongomock_store(f"mongodb://mongomock.test/empty_{uuid4().hex}")
    assert "akgentic store init" in str(info.value)
    assert "akgentic_mongo.init" in str(info.value)


def test_an_unreachable_server_is_a_store_error_without_the_password() -> None:
    url = "mongodb://u:secret@127.0.0.1:1/db?serverSelectionTimeoutMS=300"
    with pytest.raises(StoreUnavailableError) as info:
        MongoEventStore.from_url(url)
    assert "secret" not in str(info.value)
    with pytest.raises(StoreUnavailableError):
        init_schema(url)


def test_urls_pick_the_database_and_keep_durable_write_defaults_unless_overridden() -> None:
    parsed = parse_mongo_url("mongodb://h:27017/teams_db?replicaSet=rs0")
    assert parsed.database == "teams_db"
    assert parsed.client_options["w"] == "majority"
    assert parsed.client_options["journal"] is True
    assert parse_mongo_url("mongodb+srv://cluster.example.org").database == "akgentic"
    relaxed = parse_mongo_url("mongodb://h/db?w=1&journal=false&serverSelectionTimeoutMS=5")
    assert {"w", "journal", "serverSelectionTimeoutMS"}.isdisjoint(relaxed.client_options)
    for bad in ("mongodb://h/bad.name", "mongodb://h/a$b", "postgresql://h/db"):
        with pytest.raises(InvalidStoreURLError):
            parse_mongo_url(bad)
    with pytest.raises(InvalidStoreURLError):
        MongoEventStore.from_url("mongodb://h:notaport/db")


def test_a_closed_store_refuses_calls_with_a_store_error(mock_url: str) -> None:
    store = open_mongomock_store(mock_url)
    store.close()
    store.close()
    with pytest.raises(EventStoreError, match="closed"):
        store.list_teams()


def test_the_plugin_answers_both_schemes_through_the_registry(
    register_plugin: Callable[..., PluginInfo],
) -> None:
    register_plugin(plugin, "mongo")
    spec = get_registry().event_store_for_scheme("mongodb")
    assert spec is get_registry().event_store_for_scheme("mongodb+srv")
    assert spec.init is plugin.init_mongo_store and spec.open is plugin.open_mongo_store


def test_importing_the_kernel_and_the_plugin_module_does_not_import_pymongo() -> None:
    code = (
        "import sys, akgentic, akgentic.team, akgentic_mongo.plugin\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pymongo', 'bson')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def _init_module(url: str | None) -> subprocess.CompletedProcess[str]:
    import os

    env = dict(os.environ)
    env.pop("MONGO_URL", None)
    if url is not None:
        env["MONGO_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "akgentic_mongo.init"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_the_init_module_exits_2_without_mongo_url_and_1_when_it_fails() -> None:
    assert _init_module(None).returncode == 2
    assert "MONGO_URL" in _init_module(" ").stderr
    failed = _init_module("mongodb://u:secret@127.0.0.1:1/db?serverSelectionTimeoutMS=300")
    assert failed.returncode == 1
    assert "Traceback" not in failed.stderr and "secret" not in failed.stderr
    assert _init_module("mongodb://h/bad.name").returncode == 1


@pytest.mark.mongo_server
def test_the_init_module_exits_0_on_a_real_server_every_time(real_mongo_url: str) -> None:
    for _ in range(2):
        result = _init_module(real_mongo_url)
        assert result.returncode == 0, result.stderr
    MongoEventStore.from_url(real_mongo_url).close()
