"""docs/sandbox.md: its Python example runs on bubblewrap and prints what it says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from akgentic_bwrap import bwrap_unavailable_reason

DOC = Path(__file__).resolve().parents[3] / "docs" / "sandbox.md"


@pytest.mark.usefixtures("needs_bwrap")
def test_the_python_example_runs_and_prints_the_documented_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AKGENTIC_SANDBOX_BACKEND", raising=False)
    [example] = [
        block
        for block in re.findall(r"```python\n(.*?)```", DOC.read_text("utf-8"), re.S)
        if "resolve_sandbox_backend" in block
    ]
    expected = re.search(r"# (0 42)\s*$", example)
    assert expected is not None
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(example, str(DOC), "exec"), {})
    assert printed.getvalue().strip() == expected.group(1)


def test_the_contract_kit_example_defines_a_kit_for_the_given_backend() -> None:
    from akgentic_bwrap import BwrapBackend

    from akgentic.testing import SandboxBackendContract

    [example] = [
        block
        for block in re.findall(r"```python\n(.*?)```", DOC.read_text("utf-8"), re.S)
        if "SandboxBackendContract" in block
    ]
    namespace: dict[str, object] = {
        "MyBackend": BwrapBackend,
        "my_backend_unavailable_reason": bwrap_unavailable_reason,
    }
    exec(compile(example, str(DOC), "exec"), namespace)
    kit = namespace["TestMyBackend"]
    assert isinstance(kit, type) and issubclass(kit, SandboxBackendContract)
    assert isinstance(kit().make_backend(), BwrapBackend)
    assert kit().unavailable_reason() == bwrap_unavailable_reason()
