"""Plugins that lie: bad records, names claimed twice, impostors, typos, command clashes.

Every plugin here is a real distribution (a ``*.dist-info`` folder with its entry
points and module) found through ``importlib.metadata``, as a pip-installed one is.
The CLI cases run ``akgentic`` as a subprocess with that folder on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.plugins import (
    EssentialPluginError,
    PluginHost,
    PluginInfo,
    get_host,
    reset_host,
    use_host,
)
from akgentic.testing.plugins import FakeDistributions

HostFactory = Callable[..., PluginHost]

LYING_CARD = """
from akgentic.plugins import ToolCardSpec, VectorBackendSpec, hookimpl

@hookimpl
def akgentic_tool_cards():
    return [ToolCardSpec(name="liar", card=int)]

@hookimpl
def akgentic_vector_backends():
    return [VectorBackendSpec(name="liar-vectors", factory=dict)]
"""

COPYCAT_CARD = """
from akgentic.plugins import ToolCardSpec, hookimpl

@hookimpl
def akgentic_tool_cards():
    from akgentic_hello.shout import ShoutTool

    return [ToolCardSpec(name="shout", card=ShoutTool)]
"""

COPYCAT_STORE = """
from akgentic.plugins import EventStoreSpec, hookimpl

@hookimpl
def akgentic_event_stores():
    return [EventStoreSpec(name="copystore", schemes=("sqlite",), open=lambda url: None)]
"""

IMPOSTOR = """
import builtins

builtins.AKG_IMPOSTOR_IMPORTED = True
"""

TEAM_COMMAND = """
from akgentic.plugins import hookimpl

@hookimpl
def akgentic_cli(app):
    @app.command("team")
    def team() -> None:
        print("the impostor's team command")

    @app.command("squatter-ok")
    def fine() -> None:
        print("fine")
"""

GROUP_COMMANDS = """
from akgentic.plugins import hookimpl

@hookimpl
def akgentic_cli(app, groups):
    @groups["team"].command("create")
    def create() -> None:
        print("the impostor's team create")

    @groups["team"].command("echo-id")
    def echo_id(team_id: str) -> None:
        print(f"team {team_id}")
"""

SHOUT_CARD = """\
name: shouters
entry_point:
  card:
    agent_class: akgentic.agent.HumanProxy
    description: The human
    config: {name: "@Human", role: Human}
members:
  - card:
      agent_class: akgentic.agent.BaseAgent
      description: Shouts
      config:
        name: "@Shouter"
        role: Shouter
        tools:
          - card: shout
"""


def _install(fakes: FakeDistributions, distribution: str, name: str, source: str) -> None:
    module = distribution.replace("-", "_")
    fakes.add(distribution, entry_points={name: module}, modules={module: source})


def _run(site: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AKGENTIC_")}
    environment["PYTHONPATH"] = str(site)
    environment["COLUMNS"] = "1000"  # one logical line stays one printed line
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "akgentic.cli", *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _rows(stdout: str) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {}
    for row in json.loads(stdout):
        rows.setdefault(row["name"], []).append(row)
    return rows


# -- records checked when registered -------------------------------------------------


def test_a_record_of_the_wrong_type_makes_its_plugin_failed_and_the_rest_works(
    discovering_host: HostFactory, fake_distributions: FakeDistributions
) -> None:
    _install(fake_distributions, "akgentic-liar", "liar", LYING_CARD)
    host = discovering_host()
    cards = host.registry.tool_cards()
    assert "liar" not in cards
    assert "shout" in cards and "team" in cards
    liar = host.plugin("liar")
    assert liar is not None and liar.status == "failed"
    assert liar.error is not None
    assert "'liar'" in liar.error and "not a ToolCard subclass" in liar.error
    # A failed plugin contributes nothing, in any kind.
    assert "liar-vectors" not in host.registry.vector_backends()


def test_the_plugin_listing_reports_the_lying_plugin_failed_with_the_reason(
    fake_distributions: FakeDistributions, tmp_path: Path
) -> None:
    _install(fake_distributions, "akgentic-liar", "liar", LYING_CARD)
    result = _run(fake_distributions.root, "plugins", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    liar = _rows(result.stdout)["liar"][0]
    assert liar["status"] == "failed"
    assert "not a ToolCard subclass" in liar["error"]


# -- one name claimed twice ----------------------------------------------------------


def test_two_plugins_claiming_one_card_name_both_show_a_conflict_naming_the_other(
    fake_distributions: FakeDistributions, tmp_path: Path
) -> None:
    _install(fake_distributions, "akgentic-copycat", "copycat", COPYCAT_CARD)
    result = _run(fake_distributions.root, "plugins", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = _rows(result.stdout)
    hello, copycat = rows["hello"][0], rows["copycat"][0]
    assert hello["status"] == "conflict" and copycat["status"] == "conflict"
    assert "'shout'" in hello["error"] and "'copycat'" in hello["error"]
    assert "'shout'" in copycat["error"] and "'hello'" in copycat["error"]
    assert rows["core"][0]["status"] == "loaded"


def test_a_team_command_on_a_contested_card_name_prints_one_line_naming_both(
    fake_distributions: FakeDistributions, tmp_path: Path
) -> None:
    _install(fake_distributions, "akgentic-copycat", "copycat", COPYCAT_CARD)
    card = tmp_path / "shouters.yaml"
    card.write_text(SHOUT_CARD, encoding="utf-8")
    store = f"sqlite:///{tmp_path / 'teams.db'}"
    result = _run(
        fake_distributions.root, "team", "create", str(card), "--store", store, cwd=tmp_path
    )
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("error:") and "'shout'" in line
    assert "'hello'" in line and "'copycat'" in line
    assert "AKGENTIC_DISABLE_PLUGINS=" in line
    assert not (tmp_path / "teams.db").exists()


def test_a_second_store_for_a_taken_scheme_is_a_conflict_and_one_line_in_team_commands(
    fake_distributions: FakeDistributions, tmp_path: Path
) -> None:
    _install(fake_distributions, "akgentic-copystore", "copystore", COPYCAT_STORE)
    listing = _run(fake_distributions.root, "plugins", "--json", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    rows = _rows(listing.stdout)
    assert rows["copystore"][0]["status"] == "conflict"
    assert "'sqlite'" in rows["copystore"][0]["error"]
    assert rows["sqlite"][0]["status"] == "conflict"
    assert "'copystore'" in rows["sqlite"][0]["error"]

    from akgentic.builtin.sqlite_store import init_sqlite_store

    store = f"sqlite:///{tmp_path / 'teams.db'}"
    init_sqlite_store(store)
    result = _run(fake_distributions.root, "team", "list", "--store", store, cwd=tmp_path)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "'sqlite'" in lines[0] and "'copystore'" in lines[0]
    assert "AKGENTIC_DISABLE_PLUGINS=copystore" in lines[0]

    init = _run(fake_distributions.root, "store", "init", store, cwd=tmp_path)
    assert init.returncode == 1 and "Traceback" not in init.stderr, init.stderr
    assert "AKGENTIC_DISABLE_PLUGINS=copystore" in init.stderr


# -- essential built-ins win ------------------------------------------------------------


@pytest.fixture
def impostor(fake_distributions: FakeDistributions) -> Iterator[FakeDistributions]:
    import builtins

    _install(fake_distributions, "akgentic-impostor", "core", IMPOSTOR)
    yield fake_distributions
    if hasattr(builtins, "AKG_IMPOSTOR_IMPORTED"):
        del builtins.AKG_IMPOSTOR_IMPORTED


def test_a_distribution_claiming_the_core_name_is_the_one_failed_and_core_stays(
    discovering_host: HostFactory, impostor: FakeDistributions
) -> None:
    import builtins

    host = discovering_host()
    core = host.plugin("core")
    assert core is not None and core.status == "loaded" and core.builtin
    assert core.distribution == "akgentic"
    assert "UserProxy" in host.registry.agent_classes()
    cores = [info for info in host.plugins() if info.name == "core"]
    impostors = [info for info in cores if not info.builtin]
    assert len(cores) == 2 and len(impostors) == 1
    assert impostors[0].status == "failed"
    assert impostors[0].distribution == "akgentic-impostor"
    assert impostors[0].error is not None and "built-in" in impostors[0].error
    assert not hasattr(builtins, "AKG_IMPOSTOR_IMPORTED"), "the impostor was imported"


def test_the_plugin_listing_shows_the_core_impostor_failed_beside_the_builtin(
    impostor: FakeDistributions, tmp_path: Path
) -> None:
    result = _run(impostor.root, "plugins", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    cores = {row["distribution"]: row for row in _rows(result.stdout)["core"]}
    assert cores["akgentic"]["status"] == "loaded"
    assert cores["akgentic-impostor"]["status"] == "failed"


def test_an_essential_plugin_error_never_leaves_a_cached_host_with_nothing_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reset_host()
    try:
        monkeypatch.setenv("AKGENTIC_DISABLE_PLUGINS", "core")
        with pytest.raises(EssentialPluginError):
            get_host()
        with pytest.raises(EssentialPluginError):
            get_host()  # the failure repeats; it is not replaced by an empty host
        monkeypatch.delenv("AKGENTIC_DISABLE_PLUGINS")
        host = get_host()
        assert "core" in host.registry.provides()
        assert "sqlite" in host.registry.event_stores()
    finally:
        reset_host()


def test_a_host_whose_loading_raised_stays_empty_and_raises_again(
    discovering_host: HostFactory,
) -> None:
    host = discovering_host(AKGENTIC_DISABLE_PLUGINS="core")
    with pytest.raises(EssentialPluginError):
        host.load()
    with pytest.raises(EssentialPluginError):
        host.plugins()
    assert host.pm.get_plugins() == set()


# -- selection typos and command clashes ---------------------------------------------------


def test_disabling_a_plugin_that_is_not_installed_warns(
    discovering_host: HostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="akgentic.plugins"):
        host = discovering_host(AKGENTIC_DISABLE_PLUGINS="nosuchplugin")
        host.load()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        "AKGENTIC_DISABLE_PLUGINS" in line and "'nosuchplugin'" in line for line in warnings
    ), warnings


def test_a_plugin_command_named_like_a_builtin_command_is_reported_and_dropped(
    discovering_host: HostFactory,
    fake_distributions: FakeDistributions,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from typer.testing import CliRunner

    from akgentic.cli.app import build_app

    _install(fake_distributions, "akgentic-squatter", "squatter", TEAM_COMMAND)
    host = discovering_host()
    with use_host(host), caplog.at_level(logging.WARNING, logger="akgentic.plugins"):
        app = build_app()
    squatter = host.plugin("squatter")
    assert squatter is not None and squatter.status == "conflict"
    assert squatter.error is not None
    assert "'team'" in squatter.error and "built-in command" in squatter.error
    assert squatter.provides["cli"] == ["squatter-ok"]
    assert any("'team'" in r.getMessage() for r in caplog.records), "no warning logged"
    result = CliRunner().invoke(app, ["team", "--help"])
    assert result.exit_code == 0, result.output
    assert "impostor" not in result.output and "create" in result.output


def test_a_plugin_extends_a_builtin_group_and_cannot_replace_its_commands(
    discovering_host: HostFactory,
    fake_distributions: FakeDistributions,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from typer.testing import CliRunner

    from akgentic.cli.app import build_app

    _install(fake_distributions, "akgentic-grouper", "grouper", GROUP_COMMANDS)
    host = discovering_host()
    with use_host(host), caplog.at_level(logging.WARNING, logger="akgentic.plugins"):
        app = build_app()
    grouper = host.plugin("grouper")
    assert grouper is not None and grouper.status == "conflict"
    assert grouper.error is not None and "'team create'" in grouper.error
    assert grouper.provides["cli"] == ["team echo-id"]
    runner = CliRunner()
    added = runner.invoke(app, ["team", "echo-id", "abc"])
    assert added.exit_code == 0 and added.output.strip() == "team abc", added.output
    kept = runner.invoke(app, ["team", "create", "--help"])
    assert kept.exit_code == 0 and "impostor" not in kept.output and "CARD" in kept.output


def test_the_plugin_listing_shows_the_command_clash(
    fake_distributions: FakeDistributions, tmp_path: Path
) -> None:
    _install(fake_distributions, "akgentic-squatter", "squatter", TEAM_COMMAND)
    result = _run(fake_distributions.root, "plugins", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    squatter = _rows(result.stdout)["squatter"][0]
    assert squatter["status"] == "conflict"
    assert "'team'" in squatter["error"]
    assert "'team'" in result.stderr  # the warning line


def test_a_conflict_ends_when_one_of_the_two_plugins_goes(
    plugin_host: PluginHost, register_plugin: Callable[..., PluginInfo]
) -> None:
    from types import ModuleType

    from akgentic.plugins import DuplicatePluginNameError, ToolCardSpec, hookimpl
    from akgentic.tool import ToolCard

    class Twin(ToolCard):
        """A card two plugins both claim."""

        def get_tools(self) -> list[Callable[..., Any]]:
            return []

    for name in ("first", "second"):
        module = ModuleType(name)
        setattr(  # noqa: B010 - unknown to mypy on a ModuleType
            module, "akgentic_tool_cards", hookimpl(lambda: [ToolCardSpec(name="twin", card=Twin)])
        )
        register_plugin(module, name)
    with pytest.raises(DuplicatePluginNameError) as error:
        plugin_host.registry.tool_cards()
    assert "AKGENTIC_DISABLE_PLUGINS=first or AKGENTIC_DISABLE_PLUGINS=second" in str(error.value)
    statuses = {info.name: info.status for info in plugin_host.plugins()}
    assert statuses == {"first": "conflict", "second": "conflict"}

    plugin_host.unregister("second")
    first = plugin_host.plugin("first")
    assert first is not None and first.status == "loaded" and first.error is None
    assert plugin_host.registry.tool_cards()["twin"].card is Twin
