"""The kernel's layers, read from its imports: the rules they must keep, and their picture.

The order is the one ``ARCHITECTURE.md`` fixes: each kernel package may import only
packages below it (``core`` at the bottom, ``testing`` on top), packages on one level
(``team``, ``tool``, ``vector``, ``sandbox``) may import each other only without a
circle, and nothing in the kernel imports a plugin. Beyond the order:

- only ``akgentic/core`` touches pykka or the core's private seam over it;
- a plugin imports the kernel through :mod:`akgentic.plugin_api` only (and the test
  kit, :mod:`akgentic.testing`, from the modules that make up its own kit), never a
  kernel module path nor a ``_``-prefixed name.

Every import counts, including those under ``if TYPE_CHECKING:`` and inside
functions: a type-only arrow still ties the layers' meaning together.

``python scripts/layers.py`` prints the violations (exit 1 when there are any);
``python scripts/layers.py --write`` regenerates ``docs/layers.md``, the picture that
``tests/test_layering.py`` checks is current.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Kernel packages from the bottom up; a tuple is one level.
ORDER: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("llm",),
    ("plugins",),
    ("team", "tool", "vector", "sandbox"),
    ("cluster",),
    ("agent",),
    ("builtin",),
    ("console",),
    ("plugin_api",),
    ("cli",),
    ("testing",),
)
RANK = {package: level for level, packages in enumerate(ORDER) for package in packages}
# Top-level modules under akgentic/ that every package may use.
FLOOR = {"_lazy"}
SEAM = ("pykka", "akgentic.core._pykka_seam")


@dataclass(frozen=True)
class Import:
    """One imported module (and the names taken from it) at one line of one file."""

    path: Path
    line: int
    module: str
    names: tuple[str, ...]

    def where(self, root: Path) -> str:
        return f"{self.path.relative_to(root)}:{self.line}"


def imports_of(path: Path, package: str) -> Iterator[Import]:
    """Every import in ``path``, relative ones made absolute against ``package``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(path, node.lineno, alias.name, ())
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            yield Import(path, node.lineno, module, tuple(a.name for a in node.names))


def package_of(path: Path, root: Path) -> str:
    """The dotted package a source file belongs to (its module path less the last part)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] != "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def kernel_files(root: Path) -> Iterator[Path]:
    yield from sorted((root / "akgentic").rglob("*.py"))


def plugin_files(root: Path) -> Iterator[Path]:
    """The plugins' own modules (their packages under ``plugins/*/``), tests left out."""
    for package in sorted((root / "plugins").glob("*/akgentic_*")):
        yield from sorted(package.rglob("*.py"))


def kernel_package(module: str) -> str | None:
    """``team`` for ``akgentic.team.store``; None for anything outside the kernel's packages."""
    parts = module.split(".")
    if parts[0] != "akgentic" or len(parts) < 2:
        return None
    return parts[1]


def _seam(module: str) -> bool:
    return any(module == seam or module.startswith(seam + ".") for seam in SEAM)


def _source_package(path: Path, root: Path) -> str | None:
    """The kernel package a file of ``akgentic/`` is in (``_lazy`` for ``akgentic/_lazy.py``)."""
    parts = path.relative_to(root / "akgentic").with_suffix("").parts
    if len(parts) == 1:
        return None if parts[0] == "__init__" else parts[0]
    return parts[0]


def _kit_module(path: Path) -> bool:
    """A plugin's own test kit: ``testing.py`` or a module of a ``testing`` package."""
    return path.stem == "testing" or "testing" in path.parent.parts


def kernel_edges(root: Path) -> Counter[tuple[str, str]]:
    """How many imports run from each kernel package to each other one."""
    edges: Counter[tuple[str, str]] = Counter()
    for path in kernel_files(root):
        source = _source_package(path, root)
        for imp in imports_of(path, package_of(path, root)):
            target = kernel_package(imp.module)
            if source and target and source != target and target not in FLOOR:
                edges[(source, target)] += 1
    return edges


def _circle(edges: set[tuple[str, str]]) -> list[str] | None:
    """One circle of the package graph, or None when it has none."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def violations(root: Path = ROOT) -> list[str]:
    """Every broken layering rule under ``root``, one line each naming file and line."""
    found: list[str] = []
    for path in kernel_files(root):
        package = package_of(path, root)
        source = _source_package(path, root)
        in_core = source == "core"
        for imp in imports_of(path, package):
            where = imp.where(root)
            if imp.module.split(".")[0].startswith("akgentic_"):
                found.append(f"{where}: the kernel imports the plugin {imp.module}")
            if _seam(imp.module) and not in_core:
                found.append(f"{where}: {imp.module} (pykka) used outside akgentic/core")
            target = kernel_package(imp.module)
            if source is None or target is None or target == source or target in FLOOR:
                continue
            if source in FLOOR:
                found.append(f"{where}: {source} is under every package but imports {target}")
            elif target not in RANK or source not in RANK:
                found.append(f"{where}: {imp.module} is in no documented layer")
            elif RANK[target] > RANK[source]:
                found.append(f"{where}: {source} imports {imp.module}, a higher layer")
    level_edges = {(a, b) for a, b in kernel_edges(root) if a in RANK and RANK[a] == RANK.get(b)}
    circle = _circle(level_edges)
    if circle is not None:
        found.append("packages of one level import each other in a circle: " + " -> ".join(circle))
    for path in plugin_files(root):
        package = package_of(path, root / "plugins" / path.relative_to(root / "plugins").parts[0])
        for imp in imports_of(path, package):
            if imp.module.split(".")[0] != "akgentic" and not _seam(imp.module):
                continue
            where = imp.where(root)
            if _seam(imp.module):
                found.append(f"{where}: {imp.module} (pykka) used outside akgentic/core")
            private = [p for p in imp.module.split(".") if p.startswith("_")]
            private += [n for n in imp.names if n.startswith("_")]
            if private:
                found.append(f"{where}: a plugin uses the private kernel name {private[0]}")
            elif imp.module == "akgentic.testing" or imp.module.startswith("akgentic.testing."):
                if not _kit_module(path):
                    found.append(f"{where}: only a plugin's own kit module imports {imp.module}")
            elif imp.module not in ("akgentic", "akgentic.plugin_api"):
                found.append(f"{where}: a plugin imports {imp.module}, not akgentic.plugin_api")
    return found


def picture(root: Path = ROOT) -> str:
    """``docs/layers.md``: the layer order and the package imports, as a Mermaid graph."""
    edges = kernel_edges(root)
    lines = [
        "# The kernel's layers",
        "",
        "<!-- Generated by `python scripts/layers.py --write` from the code's imports;",
        "     tests/test_layering.py fails when it is out of date. -->",
        "",
        "Each kernel package imports only packages below it. Packages on one level may",
        "import each other, never in a circle. Plugins sit on top and import the",
        "kernel's public surface (see [writing plugins](writing-plugins.md)).",
        "",
        "| level | packages |",
        "|---|---|",
    ]
    for level in range(len(ORDER) - 1, -1, -1):
        lines.append(f"| {level} | {', '.join(f'`akgentic.{p}`' for p in ORDER[level])} |")
    lines += [
        "",
        "Arrows point from the importing package to the imported one.",
        "",
        "```mermaid",
        "flowchart TD",
    ]
    for level in range(len(ORDER) - 1, -1, -1):
        for package in ORDER[level]:
            lines.append(f"    {package}[akgentic.{package}]")
    for a, b in sorted(edges, key=lambda edge: (-RANK.get(edge[0], -1), edge)):
        lines.append(f"    {a} --> {b}")
    lines += ["```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="regenerate docs/layers.md")
    args = parser.parse_args(argv)
    if args.write:
        (ROOT / "docs" / "layers.md").write_text(picture(), encoding="utf-8")
    problems = violations()
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
