"""docs/plugins.md: its Python block runs and prints what the page says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def test_the_two_registries_example_runs_and_prints_what_the_page_shows(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "docs/plugins.md should hold one runnable example"
    code, expected = blocks[0]
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AKGENTIC_")}
    result = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected
