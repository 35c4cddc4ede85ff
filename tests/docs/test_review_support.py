"""The ``akgentic_review`` support package reviews as its docstrings say.

The contract kits of docs/writing-plugins.md check that ``Reviewer`` is a good team
member; these tests check what it does with a diff: the verdict it records and answers.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from akgentic.core import ActorSystem
from akgentic.core.messages import ResultMessage

SUPPORT = Path(__file__).resolve().parent / "support"
LEFTOVER_DIFF = "  def greet():\n+     print('hi')\n-     pass\n+     return 'hi'"


@pytest.fixture
def review(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """``akgentic_review.agents``, imported from ``tests/docs/support``."""
    monkeypatch.syspath_prepend(str(SUPPORT))
    yield importlib.import_module("akgentic_review.agents")
    for name in [m for m in sys.modules if m.split(".")[0] == "akgentic_review"]:
        del sys.modules[name]


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    """An actor system shut down after the test."""
    actor_system = ActorSystem()
    yield actor_system
    actor_system.shutdown(timeout=10)


def _review(
    review: ModuleType, system: ActorSystem, strictness: int, diff: str, urgent: bool = False
) -> tuple[Any, ResultMessage]:
    config = review.ReviewConfig(name="@Reviewer", role="Reviewer", strictness=strictness)
    reviewer = system.createActor(review.Reviewer, config=config)
    system.ask(reviewer, review.ReviewRequest(diff=diff, urgent=urgent), timeout=10)
    answer = system.listen(timeout=10)
    [verdict] = system.proxy_ask(reviewer, review.Reviewer, timeout=10).state.verdicts
    return verdict, answer


def test_a_strict_reviewer_flags_an_added_print_and_asks_for_changes(
    review: ModuleType, system: ActorSystem
) -> None:
    verdict, answer = _review(review, system, strictness=1, diff=LEFTOVER_DIFF)
    assert (verdict.approved, verdict.flagged) == (False, ["print('hi')"])
    assert isinstance(answer, ResultMessage)
    assert answer.content == "changes requested: print('hi')"


def test_a_clean_diff_is_approved(review: ModuleType, system: ActorSystem) -> None:
    verdict, answer = _review(review, system, strictness=3, diff="+ return 'hi'\n- # TODO")
    assert (verdict.approved, verdict.flagged) == (True, [])
    assert answer.content == "approved"


def test_an_urgent_request_is_reviewed_one_step_less_strictly(
    review: ModuleType, system: ActorSystem
) -> None:
    verdict, answer = _review(review, system, strictness=1, diff=LEFTOVER_DIFF, urgent=True)
    assert (verdict.approved, verdict.flagged, verdict.urgent) == (True, ["print('hi')"], True)
    assert answer.content == "approved"
