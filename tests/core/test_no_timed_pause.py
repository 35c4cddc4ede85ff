"""docs/core.md says the actor runtime never pauses on a timer: hold the source to it."""

from __future__ import annotations

import re
from pathlib import Path

import akgentic.core

CORE = Path(akgentic.core.__file__).parent
# A timed pause: time.sleep, or an Event/Condition wait whose bound is a guessed duration.
_SLEEP = re.compile(r"\bsleep\(|\bEvent\(\)\.wait\(")


def test_no_module_of_the_actor_runtime_sleeps() -> None:
    offenders = [
        f"{path.relative_to(CORE)}:{number}: {line.strip()}"
        for path in sorted(CORE.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if _SLEEP.search(line)
    ]
    assert offenders == []


def test_the_check_finds_a_sleep_when_there_is_one() -> None:
    assert _SLEEP.search("    time.sleep(0.1)")
    assert _SLEEP.search("threading.Event().wait(0.4)")
    assert not _SLEEP.search("ref.actor_stopped.wait(_SHUTDOWN_MARGIN)")
