"""Every ```python block of the pages below runs, as their YAML blocks are validated.

How a block runs:

- A block whose first line is a comment naming a file (``# pkg/module.py ...``) is that
  module: it is written to ``pkg/module.py`` under a temporary source directory and
  imported from there, so the page's later blocks can import it in turn.
- Any other block runs as a module of its own.
- A block that defines tests (``def test_`` or ``class Test``) is also run by pytest in a
  subprocess, so the tests it shows must pass.

Every block runs in a fresh temporary working directory, with ``tests/docs/support``
on the path: that is where the imaginary packages the pages write about (the
``mystore`` plugin of docs/event-stores.md, the ``akgentic_review`` plugin of
docs/writing-plugins.md) are made real.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = Path(__file__).resolve().parent / "support"
PAGES = ("event-stores.md", "writing-plugins.md", "cluster.md", "console.md")
#: The packages under ``support``, forgotten around each block so every block imports afresh.
SUPPORT_PACKAGES = {p.name for p in SUPPORT.iterdir() if p.is_dir() and p.name.isidentifier()}
_FILE_HEADER = re.compile(r"#\s*([\w/]+)\.py\b")


def python_blocks(page: str) -> list[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def module_name(block: str) -> str | None:
    """``pkg.module`` for a block headed ``# pkg/module.py``, else None."""
    match = _FILE_HEADER.match(block)
    return match.group(1).replace("/", ".") if match else None


def defines_tests(block: str) -> bool:
    return re.search(r"^(def test_|class Test)", block, re.M) is not None


CASES = [
    pytest.param(page, index, id=f"{page}:{index + 1}")
    for page in PAGES
    for index in range(len(python_blocks(page)))
]


def _write_modules(blocks: list[str], src: Path) -> set[str]:
    """Write the page's file-named blocks under ``src``; their top-level package names."""
    packages = set()
    for block in blocks:
        name = module_name(block)
        if name is not None:
            path = src.joinpath(*name.split(".")).with_suffix(".py")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block, encoding="utf-8")
            packages.add(name.split(".")[0])
    return packages


def _forget(packages: set[str]) -> None:
    for name in [m for m in sys.modules if m.split(".")[0] in packages]:
        del sys.modules[name]


@pytest.mark.parametrize(("page", "index"), CASES)
def test_the_python_block_of_the_page_runs(
    page: str, index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = python_blocks(page)
    block = blocks[index]
    src, work = tmp_path / "src", tmp_path / "work"
    work.mkdir()
    packages = _write_modules(blocks, src) | SUPPORT_PACKAGES
    monkeypatch.syspath_prepend(str(SUPPORT))
    monkeypatch.syspath_prepend(str(src))
    monkeypatch.chdir(work)
    monkeypatch.delenv("AKGENTIC_STORE", raising=False)
    _forget(packages)
    try:
        name = module_name(block)
        if name is not None:
            importlib.import_module(name)
        else:
            module = ModuleType(f"doc_block_{index + 1}")
            code = compile(block, f"docs/{page} block {index + 1}", "exec", dont_inherit=True)
            exec(code, module.__dict__)
    finally:
        _forget(packages)

    if defines_tests(block):
        test_file = work / f"test_doc_block_{index + 1}.py"
        test_file.write_text(block, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(SUPPORT)])}
        env.pop("AKGENTIC_STORE", None)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file.name],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
