"""WorkspaceInputContract: hostile-input probes every workspace card must pass.

A workspace card (the ``workspace`` plugin's, or another with the same tools) runs
these by subclassing the class in its own test suite and naming an *opener*: a
module-level function ``open(root: Path)`` that binds a fresh card over a tree under
``root`` and returns an object with ``tools`` (its model tools by name) and ``tree``
(the tree's directory), keeping alive what the card needs (:class:`OpenedWorkspace`
has that shape; an opener need not import it). The opener is named by
``"module:function"`` because some probes run it in a child process: a search that held
the interpreter lock forever would freeze the test process itself, so the child is the
one that gets killed, and the probe fails instead of hanging::

    class TestMyWorkspaceInput(WorkspaceInputContract):
        opener = "my_workspace.testing:open_for_contract"

What is probed:

- a catastrophic regex (``(a+)+$`` and kin) given to ``workspace_grep`` is answered,
  with a result or a tool error, while another thread of the process keeps running;
- a glob of many ``{a,b}`` groups (``workspace_glob`` and grep's ``include``) is refused
  with a tool error instead of expanding for minutes;
- a 300-character file name given to write, read and edit, and a full disk given to
  write, are tool errors (:class:`~akgentic.tool.errors.RetriableError`) naming the
  problem, never a raw ``OSError``, and never showing the host path of the tree.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from akgentic.tool.errors import RetriableError

__all__ = ["CATASTROPHIC_PATTERNS", "OpenedWorkspace", "WorkspaceInputContract"]

CATASTROPHIC_PATTERNS = ("(a+)+$", "(a|aa)+$", "^(a|a?)+$", "(\\w+\\s?)+$", "(.*a){20}$")
"""Patterns that a backtracking engine takes exponential time on over ``"a" * 40 + "!"``."""

_CHILD_ANSWER_S = 60.0
"""The bounded wait for a child's answer; a frozen child is killed when it passes."""

# Runs in the child: open the workspace, make the tool call in a thread, and answer once
# it returned -- which the main thread can only see if the call lets it run.
_CHILD = """
import importlib, json, sys, threading
from pathlib import Path
from akgentic.testing.waiting import poll_until
from akgentic.tool.errors import RetriableError

module, _, name = sys.argv[1].partition(":")
opened = getattr(importlib.import_module(module), name)(Path(sys.argv[2]))
tool, kwargs = sys.argv[3], json.loads(sys.argv[4])
outcome = {}
ticks = [0]

def call():
    try:
        outcome["text"] = opened.tools[tool](**kwargs)
    except RetriableError as error:
        outcome["error"] = str(error)
    except Exception as error:
        outcome["raised"] = repr(error)

def heartbeat():
    pause = threading.Event()
    while "done" not in outcome:
        ticks[0] += 1
        pause.wait(0.001)

beat = threading.Thread(target=heartbeat, daemon=True)
worker = threading.Thread(target=call, daemon=True)
beat.start()
worker.start()
answered = poll_until(lambda: not worker.is_alive() and ticks[0] >= 3, float(sys.argv[5]))
outcome["done"] = True
print(json.dumps({"answered": answered, "ticks": ticks[0], **outcome}))
"""


@dataclass
class OpenedWorkspace:
    """A bound workspace card: its model tools by name and its tree on disk.

    ``keep`` holds whatever must stay alive while the tools are used (cards hold their
    agent weakly, so the opener puts the observer there).
    """

    tools: dict[str, Callable[..., Any]]
    tree: Path
    keep: list[object] = field(default_factory=list)


class WorkspaceInputContract:
    """The workspace hostile-input contract as pytest tests; subclass it (module docstring).

    It complements a kit of hostile trees (swapped links, deep trees, odd names):
    this one probes what the model sends (patterns, names) and what the host refuses.
    """

    opener: ClassVar[str] = ""
    """``"module:function"`` of ``open(root: Path) -> OpenedWorkspace``; set by the subclass."""

    def open(self, root: Path) -> OpenedWorkspace:
        """The subclass's opener, called in this process."""
        assert self.opener, "set `opener` to 'module:function' in the subclass"
        module, _, name = self.opener.partition(":")
        opened = getattr(importlib.import_module(module), name)(root)
        return OpenedWorkspace(dict(opened.tools), Path(opened.tree), [opened])

    def call_in_child(self, root: Path, tool: str, **kwargs: Any) -> dict[str, Any]:
        """Call ``tool`` in a child over the same tree; its outcome, or a failure if frozen."""
        command = [
            sys.executable,
            "-c",
            _CHILD,
            self.opener,
            str(root),
            tool,
            json.dumps(kwargs),
            str(_CHILD_ANSWER_S),
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=_CHILD_ANSWER_S + 30
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"{tool}({kwargs}) froze its process: no answer, the child was killed")
        assert done.returncode == 0, done.stderr[-4000:]
        outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return outcome

    # ------------------------------------------------------------ regex

    @pytest.mark.parametrize("pattern", CATASTROPHIC_PATTERNS)
    def test_a_catastrophic_regex_is_answered_while_the_process_runs_on(
        self, tmp_path: Path, pattern: str
    ) -> None:
        opened = self.open(tmp_path)
        (opened.tree / "evil.txt").write_text(("a" * 40 + "!\n") * 50 + "a" * 30 + "\n")
        outcome = self.call_in_child(tmp_path, "workspace_grep", pattern=pattern)
        assert outcome["answered"], f"grep {pattern!r} did not return: {outcome}"
        assert "raised" not in outcome, outcome
        assert outcome["ticks"] >= 3, "another thread made no progress during the search"
        if "text" in outcome:
            # Only the last line, all a's, matches (a tool error instead is a refusal).
            assert outcome["text"] == f"evil.txt:51: {'a' * 30}", outcome

    def test_a_regex_the_engine_refuses_is_a_tool_error_naming_the_reason(
        self, tmp_path: Path
    ) -> None:
        opened = self.open(tmp_path)
        (opened.tree / "a.txt").write_text("x\n")
        for pattern in ("(", "(?<=x)y", "(a)\\1", "((a{1000}){1000}){1000}"):
            with pytest.raises(RetriableError, match=r"(?i)regex"):
                opened.tools["workspace_grep"](pattern=pattern)

    # ------------------------------------------------------------ braces

    def test_many_brace_groups_are_a_tool_error_not_minutes_of_expansion(
        self, tmp_path: Path
    ) -> None:
        opened = self.open(tmp_path)
        (opened.tree / "ab.txt").write_text("hello\n")
        wide = "{a,b}" * 22 + ".txt"  # 4 194 304 alternatives
        glob = self.call_in_child(tmp_path, "workspace_glob", pattern=wide)
        grep = self.call_in_child(tmp_path, "workspace_grep", pattern="hello", include=wide)
        for outcome in (glob, grep):
            assert outcome["answered"] and "raised" not in outcome, outcome
            assert "alternatives" in outcome.get("error", ""), outcome
        # A pattern under the cap still works.
        assert opened.tools["workspace_glob"](pattern="{a,b}{a,b}.txt") == "ab.txt"

    # ------------------------------------------------------------ OS errors

    def test_an_overlong_name_is_a_tool_error_for_write_read_and_edit(self, tmp_path: Path) -> None:
        opened = self.open(tmp_path)
        name = "n" * 300 + ".txt"
        calls: list[tuple[str, dict[str, Any]]] = [
            ("workspace_write", {"path": name, "content": "x"}),
            ("workspace_write", {"path": f"{'d' * 300}/f.txt", "content": "x"}),
            ("workspace_read", {"path": name}),
            ("workspace_edit", {"path": name, "old_string": "x", "new_string": "y"}),
        ]
        for tool, kwargs in calls:
            with pytest.raises(RetriableError) as caught:
                opened.tools[tool](**kwargs)
            message = str(caught.value)
            assert "ENAMETOOLONG" in message, (tool, message)
            assert str(opened.tree) not in message, "the host path of the tree leaked"

    @pytest.fixture
    def full_disk(self, tmp_path: Path) -> Iterator[Path]:
        """A 1 MiB tmpfs mounted under ``tmp_path`` (root only), unmounted afterwards."""
        mount = tmp_path / "small"
        mount.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            reason = f"cannot mount a small tmpfs here: {done.stderr.strip()}"
            if os.environ.get("CI") == "true":
                pytest.fail(reason)
            pytest.skip(reason)
        try:
            yield mount
        finally:
            subprocess.run(["umount", "-l", str(mount)], check=True)

    def test_a_full_disk_is_a_tool_error_the_model_can_act_on(self, full_disk: Path) -> None:
        opened = self.open(full_disk)
        opened.tools["workspace_write"](path="small.txt", content="fits")
        filler = full_disk / "filler"
        with pytest.raises(OSError) as full, filler.open("wb", buffering=0) as out:
            while True:
                out.write(b"\0" * 65536)
        assert full.value.errno == 28  # ENOSPC: the disk really is full now
        with pytest.raises(RetriableError) as caught:
            opened.tools["workspace_write"](path="big.txt", content="y" * 200_000)
        message = str(caught.value)
        assert "ENOSPC" in message and "full" in message, message
        assert str(opened.tree) not in message, "the host path of the tree leaked"
        filler.unlink()
        assert "big.txt" in opened.tools["workspace_write"](path="big.txt", content="y" * 200_000)
