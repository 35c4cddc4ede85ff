"""Reading and writing team cards as YAML, with errors that point into the file.

:func:`load_team_card` validates a card file and, when it is wrong, raises one
:class:`TeamCardValidationError` listing *every* problem with its location
(``members[0].card.agent_class``) and the line it starts on, so a command line
tool can print them all at once and create nothing.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from akgentic.core.agent_card import config_type_of
from akgentic.core.utils.serializer import MODEL_KEY, TYPE_KEY, class_path
from akgentic.team.card_tree import raw_tree_nodes, tree_problems
from akgentic.team.errors import TeamCardError
from akgentic.team.yaml_aliases import alias_overrun

if TYPE_CHECKING:
    from akgentic.core.agent_card import AgentCard
    from akgentic.team.card import TeamCard, TeamCardMember

__all__ = [
    "MAX_CARD_BYTES",
    "CardProblem",
    "TeamCardValidationError",
    "card_to_data",
    "dump_yaml",
    "load_team_card",
    "parse_team_card",
]

#: The largest team card file read (8 MiB): a card is configuration, and a file
#: far past this is a mistake whose parse would cost seconds and gigabytes.
MAX_CARD_BYTES = 8 * 1024 * 1024

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass(frozen=True)
class CardProblem:
    """One validation problem of a card file."""

    location: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = self.location or "(card)"
        if self.line is not None:
            where = f"line {self.line}: {where}"
        return f"{where}: {self.message}"


class TeamCardValidationError(TeamCardError):
    """A card file is not a valid team card; ``problems`` lists every issue."""

    def __init__(self, source: str, problems: list[CardProblem]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  {problem}" for problem in problems)
        count = len(problems)
        super().__init__(
            f"{source}: invalid team card ({count} problem{'s' if count != 1 else ''}):\n{lines}"
        )


# ------------------------------------------------------------------ dump


def _class_ref(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {TYPE_KEY}:
        return value[TYPE_KEY]
    return value


def _card_data(card: AgentCard) -> dict[str, Any]:
    data: dict[str, Any] = card.model_dump()
    data.pop(MODEL_KEY, None)
    data["agent_class"] = _class_ref(data["agent_class"])
    config = data.get("config")
    if isinstance(config, dict):
        expected = config_type_of(card.get_agent_class())
        if config.get(MODEL_KEY) == class_path(expected):
            config.pop(MODEL_KEY)
        if config.get("squad_id") is None:
            config.pop("squad_id", None)
    for key, default in (("can_be_hired", False), ("routes_to", []), ("metadata", {})):
        if data.get(key) == default:
            data.pop(key)
    return data


def _member_data(member: TeamCardMember) -> dict[str, Any]:
    data: dict[str, Any] = {"card": _card_data(member.card)}
    if member.headcount != 1:
        data["headcount"] = member.headcount
    if member.members:
        data["members"] = [_member_data(child) for child in member.members]
    return data


def card_to_data(card: TeamCard) -> dict[str, Any]:
    """A team card as the plain mapping one would write by hand.

    Type tags are kept only where they carry information (a config subclass
    that the agent class does not imply, types inside ``metadata`` values).
    """
    data: dict[str, Any] = {}
    if card.name is not None:
        data["name"] = card.name
    if card.description is not None:
        data["description"] = card.description
    data["entry_point"] = _member_data(card.entry_point)
    if card.members:
        data["members"] = [_member_data(member) for member in card.members]
    if card.message_types:
        data["message_types"] = [{TYPE_KEY: class_path(t)} for t in card.message_types]
    if card.metadata_type is not None:
        data["metadata_type"] = {TYPE_KEY: class_path(card.metadata_type)}
    if card.agent_profiles:
        data["agent_profiles"] = [_card_data(profile) for profile in card.agent_profiles]
    if card.welcome_message is not None:
        data["welcome_message"] = card.welcome_message
    if card.telemetry is not None:
        data["telemetry"] = card.telemetry
    if card.budget is not None:
        data["budget"] = card.budget.model_dump(exclude_defaults=True)
    return data


def dump_yaml(data: Any) -> str:
    """YAML text for plain data, keys in insertion order."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True)


# ------------------------------------------------------------------ load


def _node_for(root: yaml.Node | None, loc: tuple[int | str, ...]) -> yaml.Node | None:
    """The deepest YAML node along ``loc`` (a pydantic error location)."""
    node = root
    found = root
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                return found
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return found
            node = node.value[part]
        else:
            return found
        found = node
    return found


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _problem(loc: tuple[int | str, ...], message: str, root: yaml.Node | None) -> CardProblem:
    node = _node_for(root, loc)
    line = node.start_mark.line + 1 if node is not None else None
    return CardProblem(_location(loc), message, line)


def _with_config(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """Put back the ``config`` step of errors raised while an agent card builds its config.

    ``AgentCard`` validates ``config`` as the type its agent class declares before its
    own fields, so those errors come located on the card (``card.colour``).
    """
    from akgentic.core.agent_card import AgentCard

    fixed: list[int | str] = []
    for index, part in enumerate(loc):
        fixed.append(part)
        opens_card = part == "card" or (
            isinstance(part, int) and index > 0 and loc[index - 1] == "agent_profiles"
        )
        following = loc[index + 1] if index + 1 < len(loc) else None
        if opens_card and isinstance(following, str) and following not in AgentCard.model_fields:
            fixed.append("config")
    return tuple(fixed)


def _problems(
    error: ValidationError, root: yaml.Node | None, data: dict[str, Any]
) -> list[CardProblem]:
    problems: list[CardProblem] = []
    whole_card: list[CardProblem] = []
    for item in error.errors(include_url=False):
        # Pydantic inserts the class name of a union/tagged branch into loc; drop non-keys.
        loc = tuple(p for p in item["loc"] if isinstance(p, int) or not p[:1].isupper())
        loc = _with_config(loc)
        message = str(item["msg"]).removeprefix("Value error, ")
        (problems if loc else whole_card).append(_problem(loc, message, root))
    # The member-tree rules only run once every field is valid; check them on the raw
    # mapping too, so one run reports them with the rest (and with their own lines).
    tree = [_problem(loc, message, root) for loc, message in tree_problems(raw_tree_nodes(data))]
    said = [problem.message for problem in tree]
    others = [p for p in whole_card if not any(message in p.message for message in said)]
    # In file order; problems without a line (whole-card ones) first.
    return sorted(problems + tree + others, key=lambda p: p.line or 0)


def parse_team_card(text: str, source: str = "<string>") -> TeamCard:
    """Validate YAML text as a :class:`TeamCard`, raising :class:`TeamCardValidationError`.

    Aliases are bounded before anything is built (see :mod:`akgentic.team.yaml_aliases`):
    a card that would repeat too many nodes through them is refused with the line of
    the alias that went over.
    """
    from akgentic.team.card import TeamCard

    try:
        overrun = alias_overrun(text, _Loader)
        if overrun is not None:
            problem = CardProblem(f"column {overrun.column}", overrun.message, overrun.line)
            raise TeamCardValidationError(source, [problem])
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = CardProblem("", f"not valid YAML: {exc}", line)
        raise TeamCardValidationError(source, [problem]) from None
    if not isinstance(data, dict):
        raise TeamCardValidationError(
            source, [CardProblem("", f"a team card is a mapping, not {type(data).__name__}", 1)]
        )
    try:
        return TeamCard.model_validate(data)
    except ValidationError as exc:
        raise TeamCardValidationError(source, _problems(exc, root, data)) from None


def _undecodable(file: Path, exc: UnicodeDecodeError) -> TeamCardValidationError:
    line = exc.object[: exc.start].count(b"\n") + 1
    byte = exc.object[exc.start : exc.start + 1].hex()
    problem = CardProblem(
        "",
        f"not UTF-8 text: byte 0x{byte} at offset {exc.start} cannot be decoded "
        "(save the card as UTF-8)",
        line,
    )
    return TeamCardValidationError(str(file), [problem])


def _too_large(file: Path, size: str) -> TeamCardValidationError:
    problem = CardProblem(
        "", f"the card file is {size}, more than the {MAX_CARD_BYTES} bytes a card may hold"
    )
    return TeamCardValidationError(str(file), [problem])


def _read_card(file: Path) -> bytes:
    """The file's bytes, refused by its size before any is read (and bounded while reading)."""
    with file.open("rb") as stream:
        info = os.fstat(stream.fileno())
        # The size of the very file opened: a regular file over the cap is refused
        # before one byte is read; anything else (a pipe) is read up to the cap.
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_CARD_BYTES:
            raise _too_large(file, f"{info.st_size} bytes")
        data = stream.read(MAX_CARD_BYTES + 1)
    if len(data) > MAX_CARD_BYTES:
        raise _too_large(file, "larger")
    return data


def load_team_card(path: str | Path) -> TeamCard:
    """Read a YAML team card file (see :func:`parse_team_card`); it must be UTF-8.

    A file over :data:`MAX_CARD_BYTES` is refused, from its size, before it is read.
    """
    file = Path(path)
    try:
        text = _read_card(file).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _undecodable(file, exc) from None
    except OSError as exc:
        raise TeamCardValidationError(str(file), [CardProblem("", f"cannot read: {exc}")]) from exc
    return parse_team_card(text, str(file))
