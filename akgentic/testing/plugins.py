"""Helpers for testing plugins and plugin discovery."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from akgentic.plugins import PluginHost, PluginInfo

__all__ = ["FakeDistributions", "inline_plugin"]


@contextmanager
def inline_plugin(host: PluginHost, plugin: object, name: str) -> Iterator[PluginInfo]:
    """Register ``plugin`` into ``host`` for the duration of the block, then remove it."""
    info = host.register(plugin, name)
    try:
        yield info
    finally:
        host.unregister(name)


class FakeDistributions:
    """Installs throw-away distributions by writing ``*.dist-info`` folders.

    Each distribution gets a ``METADATA`` file, an ``entry_points.txt`` and,
    optionally, module source files beside it. The folder is put on
    ``sys.path`` so ``importlib.metadata`` (and therefore stevedore) finds the
    entry points exactly as it would find a pip-installed package.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self._modules: set[str] = set()
        self._active = False

    def add(
        self,
        distribution: str,
        *,
        version: str = "1.0",
        entry_points: Mapping[str, str],
        modules: Mapping[str, str] | None = None,
        group: str = "akgentic",
    ) -> None:
        """Create a distribution whose ``group`` entry points are ``entry_points``.

        ``modules`` maps a module name (``"akgentic_demo"`` or
        ``"akgentic_demo.plugin"``) to its source code.
        """
        normalized = re.sub(r"[-_.]+", "_", distribution)
        info = self.root / f"{normalized}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n",
            encoding="utf-8",
        )
        lines = [f"[{group}]"] + [f"{name} = {target}" for name, target in entry_points.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for module, source in (modules or {}).items():
            parts = module.split(".")
            path = self.root.joinpath(*parts[:-1])
            for depth in range(1, len(parts)):
                package = self.root.joinpath(*parts[:depth])
                package.mkdir(exist_ok=True)
                (package / "__init__.py").touch()
            (path / f"{parts[-1]}.py").write_text(source, encoding="utf-8")
            self._modules.add(parts[0])
        self.activate()

    def activate(self) -> None:
        """Put the folder on ``sys.path`` (done automatically by :meth:`add`)."""
        if not self._active:
            sys.path.insert(0, str(self.root))
            self._active = True
        importlib.invalidate_caches()

    def close(self) -> None:
        """Remove the folder from ``sys.path`` and forget the modules imported from it."""
        if self._active:
            sys.path.remove(str(self.root))
            self._active = False
        for name in list(sys.modules):
            if name.split(".")[0] in self._modules:
                del sys.modules[name]
        importlib.invalidate_caches()
