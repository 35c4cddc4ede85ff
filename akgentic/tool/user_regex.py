"""Regular expressions that come from a model, a slash command or a user's file.

Every card that compiles such a pattern uses :func:`compile_user_regex` instead of
``re``. The engine is RE2 (``google-re2``), chosen over the ``regex`` module's
``timeout=`` for three reasons:

* matching runs in time linear in the text, so no pattern can make a search run
  for minutes (``(a+)+$``, ``(a|aa)+$``) and nothing needs a clock;
* compiling is bounded too: repetition counts stop at 1000 and the compiled program
  at a memory budget, where ``regex.compile(r"((a{1000}){1000}){1000}")`` does not
  finish and holds the interpreter lock while it tries;
* the binding releases the interpreter lock while it matches, so a long search over
  big files slows no other team, actor or console stream of the process.

The price is RE2's syntax: no lookaround and no backreferences. Such a pattern is
refused with a :class:`~akgentic.tool.errors.RetriableError` that says so, which the
model can act on. Python's ``\\Z`` is accepted and read as RE2's ``\\z``.
"""

from __future__ import annotations

import re

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from akgentic.tool.errors import RetriableError

__all__ = ["UNSUPPORTED_SYNTAX", "UserRegex", "compile_user_regex"]

UNSUPPORTED_SYNTAX = (
    "lookahead/lookbehind ((?=...), (?!...), (?<=...), (?<!...)), backreferences "
    "(\\1, (?P=name)), possessive and atomic groups"
)
"""What RE2 refuses that Python's ``re`` accepts, as told to the model."""

# A backslash that is itself not escaped, followed by Z.
_PYTHON_END = re.compile(r"(?<!\\)((?:\\\\)*)\\Z")
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is the caller's error, not a log line


class UserRegex:
    """A compiled untrusted pattern: linear-time search, the interpreter lock released.

    Works on ``str`` and on UTF-8 ``bytes``; positions are in the units of the text
    given (characters for ``str``, bytes for ``bytes``). Bytes avoid re-encoding the
    text on every call, which matters when one text is searched many times.
    """

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str, compiled: object) -> None:
        self.pattern = pattern
        self._compiled = compiled

    def search(self, text: str | bytes, pos: int = 0) -> tuple[int, int] | None:
        """The span of the first match at or after ``pos``, or None."""
        try:
            found = self._compiled.search(text, pos)  # type: ignore[attr-defined]
        except UnicodeEncodeError:
            found = self._compiled.search(_encodable(text), pos)  # type: ignore[attr-defined]
        if found is None:
            return None
        start, end = found.span()
        return int(start), int(end)

    def fullmatch(self, text: str | bytes) -> bool:
        """Whether the whole of ``text`` matches."""
        try:
            found = self._compiled.fullmatch(text)  # type: ignore[attr-defined]
        except UnicodeEncodeError:
            found = self._compiled.fullmatch(_encodable(text))  # type: ignore[attr-defined]
        return found is not None


def _encodable(text: str | bytes) -> str | bytes:
    """``text`` with each lone surrogate (an undecodable byte of a file name) as U+FFFD.

    RE2 needs UTF-8; one surrogate becomes one character, so positions do not move.
    """
    if isinstance(text, bytes):
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def compile_user_regex(
    pattern: str,
    *,
    ignore_case: bool = False,
    multiline: bool = False,
    dot_all: bool = False,
) -> UserRegex:
    """Compile an untrusted pattern for RE2, or raise a RetriableError saying why not.

    Args:
        pattern: The regular expression, in RE2 syntax (Python's ``re`` minus
            :data:`UNSUPPORTED_SYNTAX`).
        ignore_case: Match letters in either case.
        multiline: ``^`` and ``$`` match at line boundaries too.
        dot_all: ``.`` matches a newline too.
    """
    flags = "".join(f for f, on in (("i", ignore_case), ("m", multiline), ("s", dot_all)) if on)
    source = _PYTHON_END.sub(r"\1\\z", pattern)
    if flags:
        source = f"(?{flags}){source}"
    try:
        compiled = re2.compile(source, _OPTIONS)
    except re2.error as error:
        reason = error.args[0] if error.args else "invalid"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise RetriableError(
            f"Invalid regex pattern {pattern!r}: {reason}. Patterns use RE2 syntax, which "
            f"runs in linear time: it has no {UNSUPPORTED_SYNTAX}; repetition counts stop "
            "at {1000}. Rewrite the pattern without them (for example search for a "
            "simpler pattern and read the matching lines)."
        ) from None
    return UserRegex(pattern, compiled)
