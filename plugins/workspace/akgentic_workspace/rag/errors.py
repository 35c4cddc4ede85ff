"""The one failure type of the pipeline's workers."""

from __future__ import annotations

__all__ = ["SourceError"]


class SourceError(Exception):
    """The file cannot be indexed; ``permanent`` when the same bytes would fail again."""

    def __init__(self, reason: str, permanent: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
