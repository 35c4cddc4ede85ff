"""Initialising a PostgreSQL store, opening it, and what is said when that goes wrong."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import psycopg
import pytest
from akgentic_postgres import plugin
from akgentic_postgres.errors import SchemaNotInitialisedError, StoreUnavailableError
from akgentic_postgres.store import PostgresEventStore, init_schema
from akgentic_postgres.url import parse_postgres_url, redact

from akgentic.plugins import PluginInfo, get_registry
from akgentic.team.errors import InvalidStoreURLError
from akgentic.team.urls import open_event_store

Run = Callable[..., subprocess.CompletedProcess[str]]
UNREACHABLE = "postgresql://postgres:secret@127.0.0.1:1/test?connect_timeout=3"


def _init_module(env: dict[str, str], url: str | None) -> subprocess.CompletedProcess[str]:
    env = dict(env)
    env.pop("DB_CONN_STRING_PERSISTENCE", None)
    if url is not None:
        env["DB_CONN_STRING_PERSISTENCE"] = url
    return subprocess.run(
        [sys.executable, "-m", "akgentic_postgres.init"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_the_init_module_creates_the_schema_and_exits_0_every_time(
    pg_url: str, child_env: dict[str, str]
) -> None:
    for _ in range(2):
        result = _init_module(child_env, pg_url)
        assert result.returncode == 0, result.stderr
        assert "ready" in result.stdout
    PostgresEventStore.from_url(pg_url).close()


def test_the_init_module_exits_2_when_the_variable_is_unset(child_env: dict[str, str]) -> None:
    for value in (None, "   "):
        result = _init_module(child_env, value)
        assert result.returncode == 2
        assert "DB_CONN_STRING_PERSISTENCE" in result.stderr


def test_the_init_module_exits_1_on_any_other_failure_without_leaking_the_password(
    child_env: dict[str, str],
) -> None:
    result = _init_module(child_env, UNREACHABLE)
    assert result.returncode == 1
    assert "cannot connect" in result.stderr and "Traceback" not in result.stderr
    assert "secret" not in result.stderr
    assert _init_module(child_env, "postgresql://h/db?schema=bad-name").returncode == 1
    assert _init_module(child_env, "mysql://h/db").returncode == 1


def test_opening_an_uninitialised_database_says_to_run_the_initialiser(pg_url: str) -> None:
    with pytest.raises(SchemaNotInitialisedError) as info:
        PostgresEventStore.from_url(pg_url)
    message = str(info.value)
    assert "akgentic store init" in message and "akgentic_postgres.init" in message
    assert not isinstance(info.value, psycopg.Error)


def test_the_cli_reports_an_uninitialised_store_as_one_error_line(
    run_cli: Run, pg_url: str
) -> None:
    result = run_cli("team", "list", "--store", pg_url)
    assert result.returncode == 1
    assert "akgentic store init" in result.stderr
    assert "Traceback" not in result.stderr and "psycopg" not in result.stderr


def test_akgentic_store_init_prepares_the_database_idempotently(run_cli: Run, pg_url: str) -> None:
    for _ in range(2):
        result = run_cli("store", "init", pg_url)
        assert result.returncode == 0, result.stderr
    listed = run_cli("team", "list", "--store", pg_url, "--json")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip() == "[]"


def test_an_unreachable_server_is_a_store_error_naming_the_host_not_the_password() -> None:
    with pytest.raises(StoreUnavailableError) as info:
        PostgresEventStore.from_url(UNREACHABLE)
    assert "127.0.0.1:1" in str(info.value) and "secret" not in str(info.value)
    with pytest.raises(StoreUnavailableError):
        init_schema(UNREACHABLE)


def test_store_options_are_taken_out_of_the_url_and_libpq_ones_kept() -> None:
    parsed = parse_postgres_url(
        "postgres://u:pw@db:5433/app?schema=tenant_a&sslmode=disable&pool_max_size=4"
        "&pool_min_size=0&pool_timeout=2.5"
    )
    assert parsed.schema == "tenant_a"
    assert (parsed.pool_min_size, parsed.pool_max_size, parsed.pool_timeout) == (0, 4, 2.5)
    assert parsed.conninfo == "postgres://u:pw@db:5433/app?sslmode=disable"
    assert parsed.display == "postgres://u:***@db:5433/app?sslmode=disable"
    assert redact("postgresql://db/app") == "postgresql://db/app"
    for bad in (
        "postgresql://db/app?schema=x;drop",
        'postgresql://db/app?schema="x"',
        "postgresql://db/app?pool_max_size=0",
        "postgresql://db/app?pool_min_size=5&pool_max_size=2",
        "postgresql://db/app?pool_timeout=soon",
        "sqlite:///x.db",
    ):
        with pytest.raises(InvalidStoreURLError):
            parse_postgres_url(bad)


def test_a_search_path_given_through_libpq_options_is_honoured(
    pg_server: str, pg_schema: str
) -> None:
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{pg_schema}"')
    url = f"{pg_server}?options=-csearch_path%3D{pg_schema}"
    init_schema(url)
    with PostgresEventStore.from_url(url) as store:
        assert store.list_teams() == []
    with psycopg.connect(pg_server) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = %s", (pg_schema,)
        ).fetchone()
    assert row is not None and row[0] == 4


def test_the_plugin_answers_both_schemes_through_the_registry(
    register_plugin: Callable[..., PluginInfo], initialised_url: str
) -> None:
    register_plugin(plugin, "postgres")
    spec = get_registry().event_store_for_scheme("postgresql")
    assert spec is get_registry().event_store_for_scheme("postgres")
    store = open_event_store(initialised_url.replace("postgresql://", "postgres://", 1))
    try:
        assert isinstance(store, PostgresEventStore)
        assert store.list_teams() == []
    finally:
        store.close()


def test_the_plugin_is_installed_under_the_akgentic_entry_point_group() -> None:
    from importlib.metadata import entry_points

    (entry,) = [e for e in entry_points(group="akgentic") if e.name == "postgres"]
    assert entry.value == "akgentic_postgres.plugin"


def test_importing_the_kernel_and_the_plugin_module_does_not_import_psycopg() -> None:
    code = (
        "import sys, akgentic, akgentic.team, akgentic_postgres.plugin\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('psycopg', 'psycopg_pool')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_store_check_reports_a_row_whose_columns_contradict_its_payload(
    run_cli: Run, initialised_url: str
) -> None:
    from uuid import uuid4

    from akgentic.testing.event_store_contract import contract_event, contract_process

    store = PostgresEventStore.from_url(initialised_url)
    try:
        process = contract_process()
        store.save_team(process)
        for sequence in (1, 2):
            store.save_event(contract_event(process.team_id, sequence))
        assert store.check_integrity() == []
        orphan = uuid4()
        store.save_event(contract_event(orphan, 1))
        assert run_cli("store", "check", initialised_url).returncode == 1
        assert run_cli("store", "repair", initialised_url).returncode == 0
        assert store.load_events(orphan) == []
        with psycopg.connect(store.target.conninfo, autocommit=True) as conn:
            conn.execute(
                store.tables.sql(
                    "UPDATE {events} SET sequence = 7 WHERE team_id = %s AND sequence = 2"
                ),
                (process.team_id,),
            )
        problems = store.check_integrity()
        assert len(problems) == 1 and "another team or sequence" in problems[0]
        checked = run_cli("store", "check", initialised_url)
        assert checked.returncode == 1
        assert "another team or sequence" in checked.stdout
        assert "1 store problem(s)" in checked.stdout
    finally:
        store.close()
