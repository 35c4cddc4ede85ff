"""The slash-command line grammar: splitting a line and binding it to a signature.

``/name tail`` — the name is the first whitespace-delimited word after one optional
``/``. How the tail binds is described in ``docs/commands.md``; in short:

* plain commands: the tail is split like a POSIX shell (``shlex``); a token is a
  keyword when the text before its first ``=`` names a parameter, otherwise it is a
  positional value; positionals come first; each parameter is bound at most once;
* commands ending in ``RestOfLine``: leading tokens fill the required parameters and
  ``name=value`` options, then everything left (optionally after ``--``) is handed
  over verbatim.
"""

from __future__ import annotations

import inspect
import shlex

from akgentic.tool.commands.signature import CommandSignature, ParamSpec
from akgentic.tool.commands.typing_utils import CoercionError

__all__ = ["CommandUsageError", "bind_line", "split_command_line"]

_OPTIONS_END = "--"


class CommandUsageError(Exception):
    """The tail of a command line does not fit the command; the message says why."""


def split_command_line(text: str) -> tuple[str, str]:
    """Return ``(name, tail)`` for a command line; the name loses one leading ``/``."""
    line = text.lstrip()
    line = line.removeprefix("/")
    parts = line.split(maxsplit=1)
    if not parts or line[:1].isspace():
        return "", line.strip()
    name = parts[0]
    tail = parts[1] if len(parts) > 1 else ""
    return name, tail


def _next_raw_token(text: str) -> tuple[str, str]:
    """Cut the first shell word off ``text`` (no leading blanks), quotes kept as typed.

    Returns ``(raw_word, remainder)``. Raises CommandUsageError on an unclosed quote.
    """
    quote: str | None = None
    index = 0
    while index < len(text):
        char = text[index]
        if quote is None:
            if char.isspace():
                break
            if char in "'\"":
                quote = char
            elif char == "\\":
                index += 1
        elif char == quote:
            quote = None
        elif char == "\\" and quote == '"':
            index += 1
        index += 1
    if quote is not None:
        raise CommandUsageError("cannot parse arguments: No closing quotation")
    return text[:index], text[index:]


def _unquote(raw: str) -> str:
    try:
        words = shlex.split(raw)
    except ValueError as error:
        raise CommandUsageError(f"cannot parse arguments: {error}") from None
    return words[0] if words else ""


def _bind_value(bound: dict[str, str], param: ParamSpec, raw: str) -> None:
    if param.name in bound:
        raise CommandUsageError(f"argument '{param.name}' was given more than once")
    bound[param.name] = raw


def _too_many(signature: CommandSignature, extra: str) -> CommandUsageError:
    key, sep, _ = extra.partition("=")
    if sep and key.isidentifier():
        known = ", ".join(param.name for param in signature.head) or "none"
        return CommandUsageError(f"unknown argument '{key}' (parameters: {known})")
    capacity = sum(1 for param in signature.head if param.positional)
    return CommandUsageError(
        f"too many arguments: takes at most {capacity} positional, extra value {extra!r}"
    )


def _bind_tokens(signature: CommandSignature, tail: str) -> dict[str, str]:
    try:
        tokens = shlex.split(tail)
    except ValueError as error:
        raise CommandUsageError(f"cannot parse arguments: {error}") from None
    slots = [param for param in signature.head if param.positional]
    bound: dict[str, str] = {}
    keyword_seen = False
    for token in tokens:
        key, sep, value = token.partition("=")
        param = signature.by_name(key) if sep else None
        if param is not None:
            _bind_value(bound, param, value)
            keyword_seen = True
            continue
        if keyword_seen:
            raise CommandUsageError(f"positional value {token!r} follows keyword arguments")
        if not slots:
            raise _too_many(signature, token)
        _bind_value(bound, slots.pop(0), token)
    return bound


def _bind_rest(signature: CommandSignature, rest: ParamSpec, tail: str) -> dict[str, str]:
    # Only the leading words are tokenised; the free text is never run through shlex, so
    # an apostrophe in it cannot break the line.
    slots = [param for param in signature.head if param.positional and param.required]
    bound: dict[str, str] = {}
    remaining = tail.lstrip()
    keyword_seen = False
    while remaining:
        head, sep, _ = remaining.partition("=")
        option = signature.by_name(head) if sep and not any(c.isspace() for c in head) else None
        if option is None and (keyword_seen or not slots):
            if remaining.split(maxsplit=1)[0] == _OPTIONS_END:
                remaining = remaining[len(_OPTIONS_END) :]
            break
        raw, after = _next_raw_token(remaining)
        if raw == _OPTIONS_END:
            remaining = after
            break
        if option is not None:
            _bind_value(bound, option, _unquote(raw)[len(head) + 1 :])
            keyword_seen = True
        else:
            _bind_value(bound, slots.pop(0), _unquote(raw))
        remaining = after.lstrip()
    text = remaining.strip()
    if text:
        bound[rest.name] = text
    return bound


def _coerce(param: ParamSpec, raw: str) -> object:
    try:
        return param.coercer.coerce(raw)
    except CoercionError as error:
        raise CommandUsageError(
            f"invalid value {raw!r} for '{param.name}' ({param.arg.type}): {error}"
        ) from None


def bind_line(signature: CommandSignature, tail: str) -> tuple[list[object], dict[str, object]]:
    """Bind the tail of a command line; return ``(args, kwargs)`` for the callable.

    Raises CommandUsageError with a human-readable reason when the line does not fit.
    """
    rest = signature.rest
    bound = _bind_rest(signature, rest, tail) if rest else _bind_tokens(signature, tail)
    for param in signature.params:
        if param.required and param.name not in bound:
            raise CommandUsageError(f"missing required argument '{param.name}'")
    values = {
        param.name: _coerce(param, bound[param.name])
        for param in signature.params
        if param.name in bound
    }

    args: list[object] = []
    kwargs: dict[str, object] = {}
    for param in signature.params:
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            # Positional-only values must be passed in order, so a skipped one is
            # filled with its own default to keep later ones in place.
            args.append(values.get(param.name, param.default))
        elif param.name in values:
            kwargs[param.name] = values[param.name]
    return args, kwargs
