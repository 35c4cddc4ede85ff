"""Seed import paths, and what a re-bound card (a resumed team) remembers: nothing."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any

import pytest
from akgentic_workspace import WorkspaceExec, WorkspaceTool

from akgentic.plugins import ToolCardSpec
from akgentic.tool.errors import RetriableError

Make = Callable[..., Any]


def test_the_card_is_importable_from_the_kernel_root() -> None:
    from akgentic.tool import WorkspaceTool as FromRoot

    assert FromRoot is WorkspaceTool


@pytest.mark.skipif(
    not any(f.name == "import_paths" for f in dataclasses.fields(ToolCardSpec)),
    reason="this kernel has no seed-import-path mechanism yet (ToolCardSpec.import_paths)",
)
def test_the_original_module_path_aliases_the_plugin() -> None:
    module = importlib.import_module("akgentic.tool.workspace")
    assert module.WorkspaceTool is WorkspaceTool


def test_a_rebound_card_must_read_again_before_overwriting(make_agent: Make) -> None:
    a = make_agent("@A")
    a.write("a.txt", "one\n")
    make_agent("@B").write("b.txt", "other")  # the tree lives on; so do its files
    again = make_agent("@A")  # the same agent after a restart: a fresh card, no views
    with pytest.raises(RetriableError, match="read it before overwriting"):
        again.write("a.txt", "two\n")
    again.read("a.txt")
    assert again.write("a.txt", "two\n") == "Written: a.txt"


def test_run_ids_of_a_previous_binding_are_unknown(make_agent: Make, register_plugin: Any) -> None:
    from akgentic_workspace import plugin

    register_plugin(plugin, "workspace")
    register_plugin(importlib.import_module("akgentic_bwrap.plugin"), "bwrap")
    first = make_agent(workspace_exec=WorkspaceExec(poll_attempts=0))
    run_id = first.exec("echo hi").split()[1]
    again = make_agent(workspace_exec=True)
    assert f"Unknown run id '{run_id}'" in again.exec_result(run_id)
