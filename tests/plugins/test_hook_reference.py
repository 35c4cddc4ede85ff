"""The hook specifications are the reference: every hook is documented."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from akgentic.plugins import hookspecs
from akgentic.plugins.reference import HOOK_SECTIONS, hook_functions, render_hook_reference

DOCS = Path(__file__).resolve().parents[2] / "docs" / "hooks.md"
ARCHITECTURE_HOOKS = {
    "akgentic_tool_cards",
    "akgentic_event_stores",
    "akgentic_vector_backends",
    "akgentic_sandbox_backends",
    "akgentic_embedders",
    "akgentic_agent_classes",
    "akgentic_message_types",
    "akgentic_cli",
}


def test_every_architecture_hook_has_a_specification() -> None:
    assert {fn.__name__ for fn in hook_functions()} >= ARCHITECTURE_HOOKS


@pytest.mark.parametrize("fn", hook_functions(), ids=lambda fn: fn.__name__)
def test_every_hook_is_documented_with_all_sections(fn: object) -> None:
    doc = inspect.getdoc(fn) or ""
    for section in HOOK_SECTIONS:
        assert f"{section}:" in doc, f"{fn!r} lacks the {section} section"


@pytest.mark.parametrize("fn", hook_functions(), ids=lambda fn: fn.__name__)
def test_every_hook_is_fully_typed_and_prefixed(fn: object) -> None:
    assert callable(fn)
    assert fn.__name__.startswith("akgentic_")  # type: ignore[attr-defined]
    signature = inspect.signature(fn)
    assert signature.return_annotation is not inspect.Signature.empty
    for parameter in signature.parameters.values():
        assert parameter.annotation is not inspect.Parameter.empty


def test_docs_hook_reference_is_generated_from_the_specs() -> None:
    assert DOCS.read_text(encoding="utf-8") == render_hook_reference(), (
        "docs/hooks.md is stale: run `python -m akgentic.plugins.reference > docs/hooks.md`"
    )


def test_hookspecs_module_exports_every_hook() -> None:
    assert set(hookspecs.__all__) == {fn.__name__ for fn in hook_functions()}
