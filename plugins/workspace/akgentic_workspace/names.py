"""How a file name is shown to a model or a person: as text that cannot act.

A name in a tree is whatever bytes code in the sandbox chose: a newline that starts a
fake line of a listing, a right-to-left override (U+202E) that reverses what follows
on screen, bytes that are not UTF-8 (kept by Python as lone surrogates). Every listing
the model or the console sees goes through :func:`shown`: a plain name is shown as it
is; any other is shown quoted, with ``\\``, ``"``, control, format (bidi, zero-width),
separator and unassigned characters escaped (``\\n``, ``\\u202e``), and a byte that is
not UTF-8 as ``\\xNN``. A name that starts with ``"`` is quoted too, so a quoted name
always means an escaped one.
"""

from __future__ import annotations

import unicodedata

__all__ = ["needs_escape", "shown"]

#: Control, format (bidi marks, zero-width), surrogate (undecodable byte), line and
#: paragraph separators, unassigned.
_UNSAFE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Cn"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\", '"': '\\"'}


def _unsafe(char: str) -> bool:
    return unicodedata.category(char) in _UNSAFE


def needs_escape(name: str) -> bool:
    """True when :func:`shown` quotes ``name``."""
    if name.isascii() and name.isprintable():
        return name.startswith('"')
    return name.startswith('"') or any(_unsafe(char) for char in name)


def shown(name: str) -> str:
    """``name`` (or a ``/``-separated path) as it may be shown; see the module docstring."""
    if not needs_escape(name):
        return name
    out = ['"']
    for char in name:
        code = ord(char)
        if char in _NAMED:
            out.append(_NAMED[char])
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")  # a byte os.fsdecode could not decode
        elif _unsafe(char):
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}"
                if code < 0x10000
                else f"\\U{code:08x}"
            )
        else:
            out.append(char)
    out.append('"')
    return "".join(out)
