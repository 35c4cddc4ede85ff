"""make_patch and apply_patch: the delta of two states turns one into the other."""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import StateDeltaEvent
from akgentic_ag_ui.patch import apply_patch, make_patch


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({}, {"members": []}),
        ({"members": [{"name": "a"}]}, {"members": [{"name": "a"}, {"name": "b"}]}),
        ({"members": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}, {"members": [{"name": "c"}]}),
        ({"a/b": {"~x": 1}}, {"a/b": {"~x": 2}}),
        ({"x": [1, 2]}, {"x": "now a string"}),
        ({"x": 1, "gone": True}, {"x": 1.5}),
        ([1, 2], {"root": "replaced"}),
        ({"x": 1}, {"x": True}),
    ],
)
def test_the_patch_turns_the_old_state_into_the_new(old: Any, new: Any) -> None:
    ops = make_patch(old, new)
    assert apply_patch(old, ops) == new
    assert type(apply_patch(old, ops)) is type(new)
    StateDeltaEvent(delta=ops)  # each operation is a valid AG-UI JSON Patch operation


def test_equal_states_give_no_operation_and_apply_keeps_its_argument() -> None:
    state = {"members": [{"name": "a"}]}
    assert make_patch(state, {"members": [{"name": "a"}]}) == []
    apply_patch(state, [{"op": "add", "path": "/members/1", "value": {"name": "b"}}])
    assert state == {"members": [{"name": "a"}]}


def test_an_operation_that_does_not_fit_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported"):
        apply_patch({"a": 1}, [{"op": "frobnicate", "path": "/a"}])
    with pytest.raises(ValueError, match="not a JSON pointer"):
        apply_patch({"a": 1}, [{"op": "remove", "path": "a"}])
