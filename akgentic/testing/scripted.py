"""Reading what a scripted model is asked: the last message a member received.

A team's members tell their model what reached them as ``You received a request from
@Human. ...`` followed by a blank line and the content. A test's scripted model (a
fallback of :class:`~akgentic.llm.scripted_server.ScriptedLLMServer`) decides its
answer from the latest such message, which :func:`last_received` finds in the request
body the server got.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["last_received"]

_RECEIVED = re.compile(r"You received an? (\w+) from (\S+?)\. [^\n]*\n\n", re.MULTILINE)


def last_received(body: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """``(intent, sender, content)`` of the latest message the member received, or None.

    ``body`` is an OpenAI chat request; the intent is the message's type (``request``,
    ``response``...), the sender its member name (``@Human``).
    """
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    if not users:
        return None
    content = users[-1].get("content")
    if isinstance(content, list):
        content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    marks = list(_RECEIVED.finditer(str(content)))
    if not marks:
        return None
    mark = marks[-1]
    return mark.group(1), mark.group(2), str(content)[mark.end() :].strip()
