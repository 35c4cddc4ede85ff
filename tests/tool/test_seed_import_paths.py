"""Seed import paths: ``akgentic.tool.<module>`` resolved to the plugin that serves it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

import akgentic.tool
from akgentic.plugins import PluginInfo, ToolCardSpec, hookimpl
from akgentic.tool.aliases import AliasNotInstalledError, served_paths
from akgentic.tool.lazy import CardNotInstalledError

Register = Callable[..., PluginInfo]


def _forget(prefix: str) -> None:
    for name in [n for n in sys.modules if n == prefix or n.startswith(prefix + ".")]:
        del sys.modules[name]
    leaf = prefix.rsplit(".", 1)[-1]
    if prefix.count(".") == 2 and leaf in vars(akgentic.tool):
        delattr(akgentic.tool, leaf)


@pytest.fixture(autouse=True)
def forget_aliases() -> Iterator[None]:
    """Each test imports alias paths afresh (the import system caches them)."""
    for path in ("akgentic.tool.skill", "akgentic.tool.seedling"):
        _forget(path)
    yield
    for path in ("akgentic.tool.skill", "akgentic.tool.seedling"):
        _forget(path)


_PACKAGE = "akg_seedling_pkg"


@pytest.fixture(autouse=True)
def seedling_package(tmp_path: Path) -> Iterator[ModuleType]:
    """A plugin package on ``sys.path``: a card at its root and a submodule."""
    root = tmp_path / _PACKAGE
    root.mkdir()
    (root / "__init__.py").write_text(
        "from akgentic.tool import ToolCard\n"
        "from akg_seedling_pkg.parts import Part\n"
        "class SeedTool(ToolCard):\n"
        "    def get_tools(self):\n"
        "        return []\n"
    )
    (root / "parts.py").write_text("class Part:\n    pass\n")
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(_PACKAGE)
    finally:
        sys.path.remove(str(tmp_path))
        _forget(_PACKAGE)


class _Plugin:
    """Registers the seedling card with the import paths a test chooses."""

    def __init__(self, *paths: str) -> None:
        self.paths = paths

    @hookimpl
    def akgentic_tool_cards(self) -> list[ToolCardSpec]:
        card = importlib.import_module(_PACKAGE).SeedTool
        return [ToolCardSpec(name="seedling", card=card, import_paths=self.paths)]


class _Empty:
    """A plugin that registers nothing."""


_plugin = _Plugin


def _run(code: str) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    loaded: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def test_an_alias_path_is_the_plugin_package_itself(
    register_plugin: Register, seedling_package: ModuleType
) -> None:
    register_plugin(_plugin("akgentic.tool.seedling"), "seedling")
    alias = importlib.import_module("akgentic.tool.seedling")
    assert alias is seedling_package
    assert alias.__name__ == _PACKAGE
    assert alias.SeedTool is seedling_package.SeedTool
    assert akgentic.tool.seedling is seedling_package


def test_a_submodule_of_an_alias_is_the_plugin_submodule_not_a_copy(
    register_plugin: Register, seedling_package: ModuleType
) -> None:
    register_plugin(_plugin("akgentic.tool.seedling"), "seedling")
    parts = importlib.import_module("akgentic.tool.seedling.parts")
    assert parts is sys.modules[f"{_PACKAGE}.parts"]
    assert parts.Part is seedling_package.Part


def test_a_path_nobody_serves_names_the_distribution_to_install(
    register_plugin: Register,
) -> None:
    register_plugin(_Empty(), "empty")
    with pytest.raises(AliasNotInstalledError) as raised:
        importlib.import_module("akgentic.tool.skill")
    assert "pip install akgentic-skill" in str(raised.value)
    assert isinstance(raised.value, ModuleNotFoundError)


def test_an_unknown_path_is_a_plain_module_not_found(register_plugin: Register) -> None:
    register_plugin(_Empty(), "empty")
    with pytest.raises(ModuleNotFoundError) as raised:
        importlib.import_module("akgentic.tool.seedling")
    assert not isinstance(raised.value, AliasNotInstalledError)


def test_a_plugin_can_serve_a_well_known_path(
    register_plugin: Register, seedling_package: ModuleType
) -> None:
    register_plugin(_plugin("akgentic.tool.skill"), "seedling")
    assert importlib.import_module("akgentic.tool.skill") is seedling_package
    assert served_paths() == {"akgentic.tool.skill": _PACKAGE}


def test_kernel_modules_are_never_shadowed(register_plugin: Register) -> None:
    register_plugin(_plugin("akgentic.tool.core", "akgentic.tool.team"), "seedling")
    import akgentic.tool.core as core
    import akgentic.tool.team as team

    assert core.__name__ == "akgentic.tool.core"
    assert importlib.import_module("akgentic.tool.team") is team
    assert team.__file__ is not None and _PACKAGE not in team.__file__


def test_a_kernel_module_path_forwards_the_names_it_lacks(
    register_plugin: Register, seedling_package: ModuleType
) -> None:
    register_plugin(_plugin("akgentic.tool.model"), "seedling")
    from akgentic.tool import model
    from akgentic.tool.model.observer import ModelRow

    assert model.ModelRow is ModelRow  # its own names stay the kernel's
    assert model.SeedTool is seedling_package.SeedTool
    with pytest.raises(AttributeError):
        _ = model.NoSuchThing
    with pytest.raises(AttributeError):
        _ = model._private


def test_a_kernel_module_path_without_its_plugin_names_the_distribution(
    register_plugin: Register,
) -> None:
    register_plugin(_Empty(), "empty")
    with pytest.raises(CardNotInstalledError, match="pip install akgentic-model"):
        from akgentic.tool.model import SwitchModel  # noqa: F401 - the import is what raises


@pytest.mark.parametrize("path", ["akgentic.tool", "other.tool.x", "akgentic.tool.9x", "search"])
def test_a_record_refuses_an_import_path_outside_the_tool_package(
    path: str, seedling_package: ModuleType
) -> None:
    with pytest.raises(ValueError, match="import path"):
        ToolCardSpec(name="seedling", card=seedling_package.SeedTool, import_paths=(path,))


def test_importing_the_tool_package_installs_the_finder_without_discovery() -> None:
    loaded = _run(
        "import json, sys, akgentic.tool\n"
        "from akgentic.tool.aliases import SeedAliasFinder\n"
        "print(json.dumps({'finder': any(isinstance(f, SeedAliasFinder) for f in sys.meta_path),"
        " 'discovered': 'akgentic.plugins.host' in sys.modules}))"
    )
    assert loaded == {"finder": True, "discovered": False}


def test_in_a_fresh_interpreter_the_installed_plugin_serves_its_seed_path() -> None:
    loaded = _run(
        "import json, sys\n"
        "from akgentic.tool.skill import SkillEntry, Skills\n"
        "import akgentic_skill\n"
        "print(json.dumps({'same': Skills is akgentic_skill.Skills,"
        " 'discovered': 'akgentic.plugins.host' in sys.modules}))"
    )
    assert loaded == {"same": True, "discovered": True}
