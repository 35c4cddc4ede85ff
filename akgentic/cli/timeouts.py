"""The ``--timeout`` rule shared by the commands that take one.

A timeout is a finite number of seconds, above 0 and at most :data:`MAX_TIMEOUT_S`:
``inf``, ``nan``, a negative number or ``1e308`` would otherwise reach a clock or a
wait that cannot hold it and end in a traceback.
"""

from __future__ import annotations

import math

__all__ = ["MAX_TIMEOUT_S", "timeout_problem"]

#: The longest timeout a command accepts: one week.
MAX_TIMEOUT_S = 7 * 24 * 3600.0


def timeout_problem(value: float, option: str = "--timeout") -> str | None:
    """None when ``value`` is a usable timeout, else the one-line reason it is not."""
    if math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S:
        return None
    return (
        f"{option} must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g} "
        f"(got {value!r})"
    )
