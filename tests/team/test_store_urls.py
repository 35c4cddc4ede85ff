"""Store URLs, the default store, and opening stores through the plugin registry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from akgentic.builtin import sqlite_store, yaml_store
from akgentic.plugins import EventStoreSpec, PluginHost, use_host
from akgentic.team import (
    DEFAULT_STORE_URL,
    InvalidStoreURLError,
    SqliteEventStore,
    UnknownStoreSchemeError,
    YamlEventStore,
    default_store_url,
    open_event_store,
)
from akgentic.team.urls import parse_file_url
from akgentic.testing.plugins import FakeDistributions


def test_the_default_store_is_sqlite_under_the_working_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AKGENTIC_STORE", raising=False)
    assert DEFAULT_STORE_URL == "sqlite:///.akgentic/akgentic.db"
    assert default_store_url() == DEFAULT_STORE_URL


def test_akgentic_store_overrides_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AKGENTIC_STORE", "yaml:///teams")
    assert default_store_url() == "yaml:///teams"


def test_three_slashes_mean_a_path_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse_file_url("sqlite:///data/a.db", "sqlite").path == tmp_path / "data" / "a.db"


def test_four_slashes_mean_an_absolute_path() -> None:
    assert parse_file_url("sqlite:////var/lib/a.db", "sqlite").path == Path("/var/lib/a.db")


def test_memory_is_recognised_for_sqlite() -> None:
    assert parse_file_url("sqlite:///:memory:", "sqlite").in_memory


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite://host/a.db", "names a host"),
        ("sqlite://", "has no path"),
        ("/just/a/path", "has no scheme"),
        ("sqlite:///a.db?colour=red", "unknown option"),
        ("sqlite:///a.db?synchronous=sometimes", "synchronous must be one of"),
        ("sqlite:///a.db?timeout=soon", "timeout must be a number"),
    ],
)
def test_malformed_sqlite_urls_are_refused_with_a_reason(
    url: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidStoreURLError, match=message):
        SqliteEventStore.from_url(url)
    assert list(tmp_path.iterdir()) == []


def test_malformed_yaml_urls_are_refused_with_a_reason(tmp_path: Path) -> None:
    with pytest.raises(InvalidStoreURLError, match="fsync must be true or false"):
        YamlEventStore.from_url(f"yaml:///{tmp_path}/t?fsync=maybe")
    with pytest.raises(InvalidStoreURLError, match="needs a directory"):
        YamlEventStore.from_url("yaml:///:memory:")


def test_open_event_store_picks_the_store_by_scheme(
    store_plugins: PluginHost, tmp_path: Path
) -> None:
    sqlite = open_event_store(f"sqlite:///{tmp_path}/a.db")
    yaml = open_event_store(f"yaml:///{tmp_path}/teams?fsync=false")
    try:
        assert isinstance(sqlite, SqliteEventStore)
        assert sqlite.path == tmp_path / "a.db"
        assert isinstance(yaml, YamlEventStore)
        assert yaml.root == tmp_path / "teams"
        assert yaml.fsync is False
    finally:
        sqlite.close()
        yaml.close()


def test_open_event_store_without_url_opens_the_default_under_the_cwd(
    store_plugins: PluginHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AKGENTIC_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    store = open_event_store()
    store.close()
    assert isinstance(store, SqliteEventStore)
    assert (tmp_path / ".akgentic" / "akgentic.db").is_file()


def test_open_event_store_without_url_follows_akgentic_store(
    store_plugins: PluginHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKGENTIC_STORE", f"yaml:///{tmp_path}/env-teams")
    store = open_event_store()
    store.close()
    assert isinstance(store, YamlEventStore)
    assert (tmp_path / "env-teams").is_dir()


def test_an_unknown_scheme_lists_installed_schemes_and_creates_nothing(
    store_plugins: PluginHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnknownStoreSchemeError) as info:
        open_event_store("redis://localhost/0")
    message = str(info.value)
    assert "cannot open store 'redis://localhost/0'" in message
    assert "available: sqlite, yaml" in message
    assert "pip install" in message
    assert isinstance(info.value, LookupError)
    assert list(tmp_path.iterdir()) == []


def test_a_well_known_plugin_scheme_names_the_distribution_to_install(
    store_plugins: PluginHost,
) -> None:
    with pytest.raises(UnknownStoreSchemeError, match="pip install akgentic-postgres"):
        open_event_store("postgresql://localhost/akgentic")


def test_a_store_plugin_left_out_is_not_opened(plugin_host: PluginHost, tmp_path: Path) -> None:
    plugin_host.register(yaml_store, "yaml")
    with pytest.raises(UnknownStoreSchemeError, match="available: yaml"):
        open_event_store(f"sqlite:///{tmp_path}/a.db")
    assert not (tmp_path / "a.db").exists()


def test_each_builtin_module_registers_one_store_with_an_init(
    store_plugins: PluginHost, tmp_path: Path
) -> None:
    stores = store_plugins.registry.event_stores()
    assert sorted(stores) == ["sqlite", "yaml"]
    spec: EventStoreSpec = store_plugins.registry.event_store_for_scheme("sqlite")
    assert spec.schemes == ("sqlite",)
    assert spec.init is not None
    spec.init(f"sqlite:///{tmp_path}/init.db")
    spec.init(f"sqlite:///{tmp_path}/init.db")
    assert (tmp_path / "init.db").is_file()
    yaml_spec = store_plugins.registry.event_store_for_scheme("yaml")
    assert yaml_spec.init is not None
    yaml_spec.init(f"yaml:///{tmp_path}/yaml-root")
    assert (tmp_path / "yaml-root").is_dir()
    assert store_plugins.registry.owner("event_stores", "sqlite") is not None
    assert sqlite_store.akgentic_event_stores()[0].name == "sqlite"  # type: ignore[index]


def test_importing_akgentic_team_stays_light() -> None:
    code = (
        "import sys, json\n"
        "from akgentic.team import TeamCard, Process, EventStore, PersistenceSubscriber\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    modules = set(json.loads(result.stdout))
    heavy = {m for m in modules if m.split(".")[0] in {"pydantic_ai", "stevedore", "sqlite3"}}
    assert heavy == set()
    assert "akgentic.builtin.core" not in modules  # no plugin discovery on import
    assert "akgentic.team.stores.sqlite" not in modules
    assert "akgentic.team.stores.yaml" not in modules


FAKE_STORE_PLUGIN = """
from akgentic.plugins import EventStoreSpec, hookimpl

@hookimpl
def akgentic_event_stores():
    return [EventStoreSpec(name="fakestore", schemes=("fakestore",), open=dict)]
"""


def test_a_disabled_store_plugin_is_named_in_the_error(
    fake_distributions: FakeDistributions, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_distributions.add(
        "akgentic-fakestore",
        entry_points={"fakestore": "akgentic_fakestore"},
        modules={"akgentic_fakestore": FAKE_STORE_PLUGIN},
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AKGENTIC_")}
    env["AKGENTIC_DISABLE_PLUGINS"] = "fakestore"
    with (
        use_host(PluginHost(env=env)),
        pytest.raises(UnknownStoreSchemeError, match=r"'fakestore' .* is installed but disabled"),
    ):
        open_event_store("fakestore:///anything")
