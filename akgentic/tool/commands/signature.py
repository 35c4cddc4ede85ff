"""Reading a command's callable: parameters, types, docstring and registration checks.

Everything here runs once, when a command is registered, so that a badly shaped
command fails at assembly time instead of on the first slash command a human types.
"""

from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Final

from akgentic.tool.commands.models import CommandArg
from akgentic.tool.commands.typing_utils import (
    Coercer,
    choice_values,
    contains_pydantic_model,
    is_rest_of_line,
    mentions_rest_of_line,
    type_name,
)

__all__ = ["CommandSignature", "ParamSpec", "parse_docstring"]

_EMPTY: Final = inspect.Parameter.empty
_ARGS_HEADERS: Final = frozenset({"args:", "arguments:", "parameters:", "params:"})
_SECTION_HEADER: Final = re.compile(r"^[A-Z][A-Za-z ]*:$")
_ARG_ENTRY: Final = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")

_ANALYSED_LIMIT: Final = 4096
_analysed: dict[Hashable, CommandSignature] = {}
_analysed_lock = threading.Lock()


def _fingerprint(func: Callable[..., object]) -> Hashable | None:
    """What the analysis of ``func`` depends on, or None when it cannot be told.

    Every agent of a class registers commands built from the same code (bound methods,
    closures over its own cards), so their signatures repeat from agent to agent.
    """
    inner = inspect.unwrap(func)
    code = getattr(inner, "__code__", None)
    if code is None or not (inspect.isfunction(func) or inspect.ismethod(func)):
        return None
    raw = getattr(inner, "__func__", inner)
    key = (
        code,
        type(func),
        inspect.ismethod(inner),
        getattr(func, "__qualname__", None),
        func.__doc__,
        inner.__doc__,
        getattr(raw, "__defaults__", None),
        tuple(sorted((getattr(raw, "__kwdefaults__", None) or {}).items())),
        tuple((getattr(func, "__annotations__", None) or {}).items()),
        tuple((getattr(raw, "__annotations__", None) or {}).items()),
    )
    try:
        hash(key)
    except TypeError:  # an unhashable default or annotation: analyse every time
        return None
    return key


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary and per-argument descriptions.

    The summary is the first paragraph folded onto one line. Argument descriptions
    come from an ``Args:`` (or ``Arguments:`` / ``Parameters:``) section, with
    continuation lines joined by single spaces.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION_HEADER.match(line.strip()):
            break
        summary.append(line.strip())

    described: dict[str, str] = {}
    try:
        start = next(i for i, line in enumerate(lines) if line.strip().lower() in _ARGS_HEADERS)
    except StopIteration:
        return " ".join(summary), described
    header_indent = len(lines[start]) - len(lines[start].lstrip())
    entry_indent: int | None = None
    current: str | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= header_indent:
            break
        if entry_indent is None:
            entry_indent = indent
        match = _ARG_ENTRY.match(line.strip())
        if indent == entry_indent and match:
            current = match.group(1)
            described[current] = match.group(2).strip()
        elif indent > entry_indent and current is not None:
            described[current] = f"{described[current]} {line.strip()}".strip()
        else:
            break
    return " ".join(summary), {name: text for name, text in described.items() if text}


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One parameter of a registered command, analysed once at registration.

    Attributes:
        name: Parameter name.
        kind: Python parameter kind (positional-only, keyword-only, ...).
        default: The default value, or ``inspect.Parameter.empty`` when required.
        coercer: Converts command-line text to the parameter's type.
        rest_of_line: True for a trailing ``RestOfLine`` parameter.
        positional: True when a bare token on the command line may bind to it.
        arg: The discovery record published in the command's descriptor.
    """

    name: str
    kind: inspect._ParameterKind
    default: object
    coercer: Coercer
    rest_of_line: bool
    positional: bool
    arg: CommandArg

    @property
    def required(self) -> bool:
        """True when the command line must provide a value."""
        return self.default is _EMPTY


@dataclass(frozen=True, slots=True)
class CommandSignature:
    """The parameters of one command and what the command line may do with them."""

    params: tuple[ParamSpec, ...]
    description: str

    @property
    def rest(self) -> ParamSpec | None:
        """The trailing ``RestOfLine`` parameter, if the command has one."""
        if self.params and self.params[-1].rest_of_line:
            return self.params[-1]
        return None

    @property
    def head(self) -> tuple[ParamSpec, ...]:
        """Parameters bound from tokens (all of them unless there is a rest parameter)."""
        return self.params[:-1] if self.rest is not None else self.params

    def by_name(self, name: str) -> ParamSpec | None:
        """The token-bound parameter called ``name``, if any."""
        return next((param for param in self.head if param.name == name), None)

    @classmethod
    def from_callable(cls, name: str, func: Callable[..., object], owner: str) -> CommandSignature:
        """Analyse ``func``; raise ValueError when it cannot serve as a command.

        The result is immutable and shared: a function with the same code, docstring,
        defaults and annotations (the same command of another agent) is analysed once.
        """
        fingerprint = _fingerprint(func)
        key = None if fingerprint is None else (cls, name, owner, fingerprint)
        if key is not None:
            with _analysed_lock:
                known = _analysed.get(key)
            if known is not None:
                return known
        analysed = cls._analyse(name, func, owner)
        if key is not None:
            with _analysed_lock:
                if len(_analysed) >= _ANALYSED_LIMIT:  # e.g. defaults that differ per agent
                    _analysed.clear()
                _analysed[key] = analysed
        return analysed

    @classmethod
    def _analyse(cls, name: str, func: Callable[..., object], owner: str) -> CommandSignature:
        def reject(reason: str) -> ValueError:
            return ValueError(f"Cannot register command '{name}' from {owner}: {reason}")

        if inspect.iscoroutinefunction(func):
            raise reject("async callables are not supported; commands run synchronously")
        try:
            signature = inspect.signature(func, eval_str=True)
        except (NameError, TypeError, ValueError) as error:
            raise reject(f"its signature cannot be read ({error})") from error

        summary, described = parse_docstring(inspect.getdoc(func))
        parameters = list(signature.parameters.values())
        specs: list[ParamSpec] = []
        for index, parameter in enumerate(parameters):
            specs.append(
                _analyse_parameter(
                    parameter,
                    is_last=index == len(parameters) - 1,
                    has_rest=bool(parameters) and is_rest_of_line(parameters[-1].annotation),
                    description=described.get(parameter.name),
                    reject=reject,
                )
            )
        return cls(params=tuple(specs), description=summary)


def _analyse_parameter(
    parameter: inspect.Parameter,
    *,
    is_last: bool,
    has_rest: bool,
    description: str | None,
    reject: Callable[[str], ValueError],
) -> ParamSpec:
    label = f"parameter '{parameter.name}'"
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        raise reject(f"*{parameter.name} is not allowed; declare each argument explicitly")
    if parameter.kind is inspect.Parameter.VAR_KEYWORD:
        raise reject(f"**{parameter.name} is not allowed; declare each argument explicitly")
    annotation = parameter.annotation
    if annotation is _EMPTY:
        raise reject(f"{label} has no type annotation")
    if contains_pydantic_model(annotation):
        raise reject(f"{label} uses a pydantic model, which cannot be typed on a command line")
    rest_of_line = is_rest_of_line(annotation)
    if mentions_rest_of_line(annotation) and not (rest_of_line and is_last):
        if not is_last:
            raise reject(f"{label}: RestOfLine is only allowed on the last parameter")
        raise reject(f"{label}: RestOfLine must be used bare (give it a default instead)")
    try:
        coercer = Coercer(annotation)
    except Exception as error:  # pydantic raises several types for unsupported annotations
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise reject(f"{label} has a type pydantic cannot validate ({first_line})") from error

    keyword_only = parameter.kind is inspect.Parameter.KEYWORD_ONLY
    # Inside a RestOfLine command a defaulted earlier parameter is an option: a bare
    # word there starts the free text, so the option must be spelled name=value.
    option = has_rest and not rest_of_line and parameter.default is not _EMPTY
    positional = not keyword_only and not option and not rest_of_line
    arg = CommandArg(
        name=parameter.name,
        type=type_name(annotation),
        required=parameter.default is _EMPTY,
        description=description,
        keyword_only=(keyword_only or option) and not rest_of_line,
        rest_of_line=rest_of_line,
        choices=choice_values(annotation),
    )
    return ParamSpec(
        name=parameter.name,
        kind=parameter.kind,
        default=parameter.default,
        coercer=coercer,
        rest_of_line=rest_of_line,
        positional=positional,
        arg=arg,
    )
