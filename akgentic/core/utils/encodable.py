"""Text that every store can write: lone surrogates replaced by a readable escape.

A Python ``str`` may hold code points U+D800..U+DFFF that UTF-8 cannot encode.
They arrive from outside: ``os.fsdecode`` of a file name that is not UTF-8
(an exec's output, a name from an archive) turns each undecodable byte ``0xXX``
into U+DCXX (the ``surrogateescape`` convention). Such a string makes SQLite,
PostgreSQL, MongoDB and a UTF-8 file refuse the whole record.

The rule, applied wherever a record is turned into stored text
(:mod:`akgentic.team.stores.codec`):

* U+DC80..U+DCFF, an undecodable byte ``0xXX``, becomes the four characters
  ``\\xXX`` (the byte, as Python would write it);
* any other lone surrogate U+XXXX becomes the six characters ``\\uXXXX``.

Every other character is kept as is. The escape is lossy in one way only: a
text that already held the characters ``\\xe9`` reads back like one that held
the undecodable byte 0xE9; the text stays readable and the record is kept.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["encodable", "encodable_text", "is_encodable"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    point = ord(match.group())
    if 0xDC80 <= point <= 0xDCFF:
        return f"\\x{point - 0xDC00:02x}"
    return f"\\u{point:04x}"


def is_encodable(text: str) -> bool:
    """Whether ``text`` encodes to UTF-8 (it holds no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")  # in C, several times quicker than a regex scan
    except UnicodeEncodeError:
        return False
    return True


def encodable_text(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (see the module docstring)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(_escape, text)


def encodable(data: Any) -> Any:
    """JSON-compatible ``data`` with every string (dict keys too) made encodable.

    Lists and tuples come back as lists, dicts as dicts; other values as they are.
    """
    if isinstance(data, str):
        return encodable_text(data)
    if isinstance(data, dict):
        return {
            (encodable_text(k) if isinstance(k, str) else k): encodable(v) for k, v in data.items()
        }
    if isinstance(data, list | tuple):
        return [encodable(item) for item in data]
    return data
