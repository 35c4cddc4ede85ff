"""``akgentic plugins`` run as a real subprocess against fake installed plugins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from akgentic.testing.plugins import FakeDistributions

JSON_KEYS = {"name", "distribution", "version", "builtin", "status", "error", "hooks", "provides"}


def _run(site: Path | None, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AKGENTIC_")}
    if site is not None:
        environment["PYTHONPATH"] = str(site)
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "akgentic.cli", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=False,
    )


def _by_name(stdout: str) -> dict[str, dict[str, Any]]:
    rows = json.loads(stdout)
    assert isinstance(rows, list)
    for row in rows:
        assert set(row) == JSON_KEYS
    return {row["name"]: row for row in rows}


def test_json_listing_shows_builtins_and_example_plugin_loaded() -> None:
    result = _run(None, "plugins", "--json")
    assert result.returncode == 0, result.stderr
    rows = _by_name(result.stdout)
    assert rows["core"]["status"] == "loaded" and rows["core"]["builtin"] is True
    assert rows["hello"]["status"] == "loaded" and rows["hello"]["builtin"] is False
    assert rows["hello"]["provides"] == {"cli": ["hello"], "tool_cards": ["shout"]}
    assert rows["hello"]["hooks"] == ["akgentic_cli", "akgentic_tool_cards"]


def test_broken_plugin_is_listed_as_failed_and_the_command_still_succeeds(
    installed_broken_and_good: FakeDistributions,
) -> None:
    result = _run(installed_broken_and_good.root, "plugins", "--json")
    assert result.returncode == 0, result.stderr
    rows = _by_name(result.stdout)
    assert rows["broken"]["status"] == "failed"
    assert "boom at import" in rows["broken"]["error"]
    assert rows["broken"]["distribution"] == "akgentic-broken"
    assert rows["goodfake"]["status"] == "loaded"
    assert rows["goodfake"]["provides"] == {"vector_backends": ["fake-vectors"]}
    assert all(r["status"] == "loaded" for n, r in rows.items() if n != "broken")


def test_strict_mode_makes_the_listing_fail_naming_the_broken_plugin(
    installed_broken_and_good: FakeDistributions,
) -> None:
    result = _run(installed_broken_and_good.root, "plugins", "--json", AKGENTIC_STRICT_PLUGINS="1")
    assert result.returncode != 0
    assert "broken" in result.stderr


def test_disabled_broken_plugin_is_listed_as_disabled(
    installed_broken_and_good: FakeDistributions,
) -> None:
    result = _run(
        installed_broken_and_good.root,
        "plugins",
        "--json",
        AKGENTIC_DISABLE_PLUGINS="broken",
        AKGENTIC_STRICT_PLUGINS="1",
    )
    assert result.returncode == 0, result.stderr
    assert _by_name(result.stdout)["broken"]["status"] == "disabled"


def test_human_listing_prints_a_table_with_the_error(
    installed_broken_and_good: FakeDistributions,
) -> None:
    result = _run(installed_broken_and_good.root, "plugins", COLUMNS="250")
    assert result.returncode == 0, result.stderr
    assert "broken" in result.stdout
    assert "failed" in result.stdout
    assert "boom at import" in result.stdout


def test_plugin_commands_are_added_to_the_cli() -> None:
    result = _run(None, "hello", "Ada")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello, Ada!"
