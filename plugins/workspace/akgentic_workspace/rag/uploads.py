"""Uploads: a :class:`NewFileMessage` queues its paths at once (checked like tool paths)."""

from __future__ import annotations

import logging
from typing import Any

from akgentic_workspace.rag.indexing import queue_keys

__all__ = ["queue_upload"]

log = logging.getLogger("akgentic_workspace.rag")


def queue_upload(pipeline: Any, tree: str, message: Any) -> int:
    """Queue the message's paths; escaping, missing, unsupported ones are skipped. Never raises."""
    from akgentic_workspace.paths import TreePaths

    try:
        paths = TreePaths(__import__("pathlib").Path(tree))
        keys = []
        for raw in message.paths:
            try:
                keys.append(paths.canonical(raw))
            except Exception:
                log.info("upload path skipped (escapes the workspace): %r", raw[:200])
        if pipeline is None:
            return 0
        queued = queue_keys(pipeline.ctx, keys, force=bool(message.force))
        pipeline.drain()
        return queued
    except Exception as error:
        log.warning("an upload could not be queued: %s", error)
        return 0
