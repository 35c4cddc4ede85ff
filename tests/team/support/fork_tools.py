"""A tool with a side effect the fork tests count: each call appends one line to a file.

Importable by dotted path (``fork_tools.CountingTool``) so a resumed fork finds it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from akgentic.testing.waiting import wait_until
from akgentic.tool import ToolCard


class CountingTool(ToolCard):
    """``count(n)`` appends a line to ``path``; with ``hold``, then waits for that file."""

    path: str
    hold: str = ""

    def get_tools(self) -> list[Callable[..., Any]]:
        card = self

        def count(n: int) -> str:
            """Count one call.

            Args:
                n: A number to echo back.
            """
            with open(card.path, "a", encoding="utf-8") as calls:
                calls.write(f"call {n}\n")
            if card.hold:
                wait_until(lambda: Path(card.hold).exists(), timeout=60)
            return f"counted {n}"

        return [count]
