"""The kernel's import graph keeps the documented layer order (``scripts/layers.py``).

Each rule is also run against a small tree holding one deliberate bad import, so a
checker that stopped seeing imports would fail here rather than pass everything.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layers", ROOT / "scripts" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("layers", module)
    spec.loader.exec_module(module)
    return module


layers = _load()


def test_the_kernel_keeps_its_layers() -> None:
    assert layers.violations(ROOT) == []


def test_the_layer_picture_in_docs_is_current() -> None:
    written = (ROOT / "docs" / "layers.md").read_text(encoding="utf-8")
    assert written == layers.picture(ROOT), "run: python scripts/layers.py --write"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for package in ("akgentic", *(f"akgentic/{p}" for p in layers.RANK)):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").touch()
    (tmp_path / "plugins").mkdir(exist_ok=True)
    return tmp_path


GOOD = {
    "akgentic/team/store.py": "from akgentic.core.agent import Akgent\nimport akgentic.plugins\n",
    "akgentic/cli/app.py": "from akgentic.console import server\nfrom ..agent import session\n",
    "plugins/p/akgentic_p/card.py": "from akgentic.plugin_api import ToolCard, hookimpl\n",
    "plugins/p/akgentic_p/testing.py": "from akgentic.testing import wait_until\n",
}


def test_a_tree_that_keeps_the_rules_passes(tmp_path: Path) -> None:
    assert layers.violations(_tree(tmp_path, GOOD)) == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"akgentic/plugins/specs.py": "from akgentic.tool.core.card import ToolCard\n"},
            "akgentic/plugins/specs.py:1: plugins imports akgentic.tool.core.card, a higher layer",
            id="upward",
        ),
        pytest.param(
            {
                "akgentic/vector/actor.py": (
                    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from akgentic.builtin import engine\n"
                )
            },
            "akgentic/vector/actor.py:3: vector imports akgentic.builtin, a higher layer",
            id="upward-type-only",
        ),
        pytest.param(
            {"akgentic/cli/demo.py": "def f():\n    from ..testing import llm_server\n"},
            "akgentic/cli/demo.py:2: cli imports akgentic.testing, a higher layer",
            id="upward-relative-in-function",
        ),
        pytest.param(
            {"akgentic/team/x.py": "import akgentic_postgres.store\n"},
            "akgentic/team/x.py:1: the kernel imports the plugin akgentic_postgres.store",
            id="kernel-imports-plugin",
        ),
        pytest.param(
            {"akgentic/team/x.py": "from pykka.messages import ProxyCall\n"},
            "akgentic/team/x.py:1: pykka.messages (pykka) used outside akgentic/core",
            id="pykka-outside-core",
        ),
        pytest.param(
            {"akgentic/team/x.py": "from akgentic.core._pykka_seam import thread_of\n"},
            "akgentic/team/x.py:1: akgentic.core._pykka_seam (pykka) used outside akgentic/core",
            id="seam-outside-core",
        ),
        pytest.param(
            {"plugins/p/akgentic_p/x.py": "from akgentic.vector.engine import _Collection\n"},
            "plugins/p/akgentic_p/x.py:1: a plugin uses the private kernel name _Collection",
            id="plugin-private-name",
        ),
        pytest.param(
            {"plugins/p/akgentic_p/x.py": "from akgentic.core._pykka_seam import actor_of\n"},
            "plugins/p/akgentic_p/x.py:1: akgentic.core._pykka_seam (pykka) used outside "
            "akgentic/core",
            id="plugin-seam",
        ),
        pytest.param(
            {"plugins/p/akgentic_p/x.py": "from akgentic.team.models import Process\n"},
            "plugins/p/akgentic_p/x.py:1: a plugin imports akgentic.team.models, not "
            "akgentic.plugin_api",
            id="plugin-deep-import",
        ),
        pytest.param(
            {"plugins/p/akgentic_p/card.py": "from akgentic.testing import wait_until\n"},
            "plugins/p/akgentic_p/card.py:1: only a plugin's own kit module imports "
            "akgentic.testing",
            id="plugin-runtime-imports-kit",
        ),
        pytest.param(
            {"akgentic/_lazy.py": "from akgentic.team import x\n"},
            "akgentic/_lazy.py:1: _lazy is under every package but imports team",
            id="floor-imports-up",
        ),
        pytest.param(
            {
                "akgentic/tool/a.py": "import akgentic.vector.b\n",
                "akgentic/vector/b.py": "from akgentic.tool import a\n",
            },
            "packages of one level import each other in a circle: tool -> vector -> tool",
            id="peer-circle",
        ),
    ],
)
def test_a_bad_import_is_reported(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    found = layers.violations(_tree(tmp_path, {**GOOD, **files}))
    assert expected in found, found


def test_the_plugin_api_exports_what_it_declares() -> None:
    """Every exported name resolves, from the module that its type-checking import names."""
    import ast

    import akgentic.plugin_api as api

    tree = ast.parse((ROOT / "akgentic" / "plugin_api.py").read_text(encoding="utf-8"))
    (checking,) = [node for node in tree.body if isinstance(node, ast.If)]
    typed = {
        alias.name: node.module
        for node in checking.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }
    lazy = {name: module for module, names in api._EXPORTS.items() for name in names}
    assert typed == lazy
    assert sorted(api.__all__) == sorted(lazy)
    for name, module in lazy.items():
        assert getattr(api, name) is getattr(importlib.import_module(module), name)


def test_every_plugin_api_name_is_in_the_plugin_guide() -> None:
    import akgentic.plugin_api as api

    guide = (ROOT / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
    assert [name for name in api.__all__ if f"`{name}`" not in guide] == []
