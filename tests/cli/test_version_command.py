"""``akgentic version`` and ``akgentic --version`` print the one version the distribution has."""

from __future__ import annotations

import importlib.metadata
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path

import akgentic

Run = Callable[..., subprocess.CompletedProcess[str]]

ROOT = Path(__file__).resolve().parents[2]


def test_the_command_and_the_option_print_the_package_version(run_module: Run) -> None:
    for args in (["version"], ["--version"]):
        done = run_module("akgentic.cli", *args)
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"{akgentic.__version__}\n"
    assert akgentic.__version__ == importlib.metadata.version("akgentic")


def test_pyproject_takes_its_version_from_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    dynamic = project["tool"]["setuptools"]["dynamic"]
    assert dynamic["version"] == {"attr": "akgentic.__version__"}


def test_no_subpackage_keeps_a_version_of_its_own() -> None:
    found = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "akgentic").rglob("*.py"))
        if path != ROOT / "akgentic" / "__init__.py"
        and any(
            line.startswith("__version__") for line in path.read_text(encoding="utf-8").splitlines()
        )
    ]
    assert found == []
