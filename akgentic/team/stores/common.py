"""Steps every event store repeats, public for store authors (kernel and plugins).

* :class:`ClosingStore`: ``with store:`` closes the store on exit.
* :func:`matching_teams`: decode stored ``(team_id, payload)`` rows into the team
  records every ``list_teams`` filter matches, skipping unreadable ones.

See ``docs/event-stores.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, Self

from akgentic.team.errors import TeamRecordUnreadableError
from akgentic.team.models import Process, TeamStatus
from akgentic.team.stores.codec import decode_process

__all__ = ["ClosingStore", "matching_teams"]


class ClosingStore:
    """Mixin making a store a context manager whose exit calls its ``close()``."""

    def close(self) -> None:
        """Release the store's resources; every store overrides this."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def matching_teams(
    rows: Iterable[tuple[Any, Any]],
    user_id: str | None,
    status: TeamStatus | None,
    entries: Sequence[str],
    logger: logging.Logger,
) -> list[Process]:
    """Decode ``(team_id, payload)`` rows, keeping the records every filter matches.

    ``entries`` are the metadata filter entries (``metadata_filter_entries``). A
    record that cannot be decoded is logged on ``logger`` and skipped. The payload
    is authoritative: each filter is checked again on the decoded record, so the
    columns or fields a store queries can never widen a result. Row order is kept.
    """
    found: list[Process] = []
    for team_id, payload in rows:
        try:
            process = decode_process(payload, str(team_id))
        except TeamRecordUnreadableError as exc:
            logger.warning("list_teams skips an unreadable team record: %s", exc)
            continue
        if user_id is not None and process.user_id != user_id:
            continue
        if status is not None and process.status != status:
            continue
        if not set(entries) <= set(process.metadata_indexes):
            continue
        found.append(process)
    return found
