"""TeamCard and TeamCardMember: the declarative definition of a team.

A :class:`TeamCard` says who is in a team (a tree of :class:`TeamCardMember`),
which member faces the outside (``entry_point``), which message class a plain
string sent to the team becomes (``message_types[0]``), which metadata model
the team's business metadata must validate against (``metadata_type``), which
extra profiles may be hired at run time (``agent_profiles``) and what greeting
is published when the team is first created (``welcome_message``), the
settings of live telemetry (``telemetry``, read by the otel plugin) and the
team-wide budget (``budget``, :class:`~akgentic.llm.budget_limits.BudgetLimits`:
caps on tokens, requests, tool calls, estimated USD and wall time counted across
every member; see ``docs/budgets.md``).

Cards are plain pydantic models: nothing runs until a factory builds the team.
They round-trip through ``model_dump()`` / ``model_validate()`` and YAML
(:meth:`TeamCard.to_yaml`, :meth:`TeamCard.from_yaml`, :func:`load_team_card`).
Unknown keys are rejected everywhere, and every class reference is resolved
when the card is loaded, so a typo fails at the edge rather than at spawn time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from akgentic.core.agent_card import AgentCard
from akgentic.core.messages.message import Message
from akgentic.core.utils.serializer import (
    MODEL_KEY,
    SerializableBaseModel,
    class_path,
    deserialize_object,
)
from akgentic.llm.budget_limits import BudgetLimits
from akgentic.team.card_tree import Location, TreeNode, tree_problems
from akgentic.team.errors import TeamCardError
from akgentic.team.resolve import (
    resolve_agent_class,
    resolve_message_type,
    resolve_metadata_type,
)

__all__ = ["TeamCard", "TeamCardMember", "spawned_name"]


def spawned_name(name: str, headcount: int, index: int) -> str:
    """Runtime name of instance ``index`` of a member (``@R`` -> ``@R_0`` when headcount > 1)."""
    return name if headcount == 1 else f"{name}_{index}"


def _strip_own_marker(cls: type[SerializableBaseModel], data: Any) -> Any:
    """Drop this class's own ``__model__`` tag; leave nested values to field validation.

    The generic deserializer drops list elements whose class cannot be
    imported (tolerant replay of old logs); a card must instead fail loudly, so
    cards validate their nested values field by field.
    """
    if type(data) is not dict:
        return data
    marker = data.get(MODEL_KEY)
    if marker is None:
        return data
    if marker != class_path(cls):
        return deserialize_object(data)
    stored = {k: v for k, v in data.items() if k != MODEL_KEY}
    # Stored payloads (they carry their marker) may predate a removed field.
    return {k: v for k, v in stored.items() if k in cls.model_fields}


def _prepare_agent_card(value: Any) -> Any:
    """Resolve the ``agent_class`` of a card to a class (registered names included).

    Cards always hold the class itself, so a card written with a dotted path, a
    registered name or a class compares equal and dumps the same way.
    """
    if isinstance(value, dict) and "agent_class" in value:
        return {**value, "agent_class": resolve_agent_class(value["agent_class"])}
    if isinstance(value, AgentCard):
        resolved = resolve_agent_class(value.agent_class)
        if resolved is not value.agent_class:
            return value.model_copy(update={"agent_class": resolved})
    return value


class TeamCardMember(SerializableBaseModel):
    """One node of a team's member tree: an agent card, how many, and its subordinates.

    ``headcount > 1`` spawns ``<name>_0`` ... ``<name>_{n-1}``; subordinates are
    spawned through (and owned by) their parent, under its last instance.
    """

    model_config = ConfigDict(extra="forbid")

    card: AgentCard
    headcount: int = Field(default=1, ge=1)
    members: list[TeamCardMember] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _deserialize_input(cls, data: Any, info: ValidationInfo) -> Any:
        return _strip_own_marker(cls, data)

    @field_validator("card", mode="before")
    @classmethod
    def _resolve_card(cls, value: Any) -> Any:
        return _prepare_agent_card(value)

    @property
    def name(self) -> str:
        """The declared ``config.name`` of the member's card."""
        return self.card.config.name

    @property
    def spawned_names(self) -> list[str]:
        """The names the instances of this member get at run time."""
        return [spawned_name(self.name, self.headcount, i) for i in range(self.headcount)]

    def walk(self) -> Iterator[tuple[TeamCardMember, TeamCardMember | None]]:
        """This member and every descendant, depth first, each with its parent node."""
        stack: list[tuple[TeamCardMember, TeamCardMember | None]] = [(self, None)]
        while stack:
            node, parent = stack.pop()
            yield node, parent
            stack.extend((child, node) for child in reversed(node.members))


class TeamCard(SerializableBaseModel):
    """The root definition of a team (see the module docstring for each field).

    Derived views: :attr:`agent_cards` (every card of the tree by name, entry
    point included), :attr:`supervisors` (first layer of ``members`` only, the
    agents a plain ``send`` reaches) and :attr:`default_message_type`.
    """

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    description: str | None = None
    entry_point: TeamCardMember
    members: list[TeamCardMember] = Field(default_factory=list)
    message_types: list[type[Message]] = Field(default_factory=list)
    metadata_type: type[SerializableBaseModel] | None = None
    agent_profiles: list[AgentCard] = Field(default_factory=list)
    welcome_message: str | None = None
    #: Idle seconds after which a managed team is passivated (its actors stopped,
    #: woken by the next message); None: the manager's setting. See virtual-teams.md.
    passivate_after: float | None = Field(default=None, gt=0)
    #: Settings for the otel plugin (``endpoint``, ``capture_content``...), validated by
    #: it when a team is created from the card; the kernel keeps them as given. A named
    #: field rather than a generic ``extensions:`` mapping: the team file says
    #: ``telemetry:`` at the top as the issue documents it, every other unknown key is
    #: still refused (a typo fails at load), and a later block is one more such field.
    telemetry: dict[str, Any] | None = None
    #: The team-wide budget, validated at load (``budget.usd: Input should be greater
    #: than 0``): enforced by the kernel before every model request of every member.
    budget: BudgetLimits | None = None

    @model_validator(mode="before")
    @classmethod
    def _deserialize_input(cls, data: Any, info: ValidationInfo) -> Any:
        return _strip_own_marker(cls, data)

    @field_validator("message_types", mode="before")
    @classmethod
    def _resolve_message_types(cls, value: Any) -> Any:
        if not isinstance(value, list | tuple):
            return value
        resolved: list[type] = []
        for index, item in enumerate(value):
            try:
                resolved.append(resolve_message_type(item))
            except ValueError as exc:
                raise ValueError(f"message_types[{index}]: {exc}") from exc
        return resolved

    @field_validator("metadata_type", mode="before")
    @classmethod
    def _resolve_metadata_type(cls, value: Any) -> Any:
        if value is None:
            return value
        return resolve_metadata_type(value)

    @field_validator("agent_profiles", mode="before")
    @classmethod
    def _resolve_profiles(cls, value: Any) -> Any:
        if not isinstance(value, list | tuple):
            return value
        return [_prepare_agent_card(item) for item in value]

    @model_validator(mode="after")
    def _check_tree(self) -> TeamCard:
        problems = tree_problems(self._tree_nodes())
        if problems:
            raise TeamCardError("; ".join(message for _location, message in problems))
        return self

    # -- derived views ----------------------------------------------------
    def iter_members(self) -> Iterator[tuple[TeamCardMember, TeamCardMember | None]]:
        """Every node (entry point first, then the member trees) with its parent node."""
        yield from self.entry_point.walk()
        for member in self.members:
            yield from member.walk()

    @property
    def agent_cards(self) -> dict[str, AgentCard]:
        """Every card of the tree by ``config.name``, entry point included.

        Raises :class:`~akgentic.team.errors.TeamCardError` (a ``ValueError``)
        when two nodes share a name.
        """
        cards: dict[str, AgentCard] = {}
        for node, _parent in self.iter_members():
            name = node.name
            if name in cards:
                raise TeamCardError(
                    f"duplicate agent name {name!r} in team card {self.name or '(unnamed)'}: "
                    "every config.name in the member tree must be unique "
                    "(reusing one card in two places is the usual cause)"
                )
            cards[name] = node.card
        return cards

    @property
    def supervisors(self) -> list[AgentCard]:
        """Cards of the first layer of ``members`` (not the entry point, nothing deeper)."""
        return [member.card for member in self.members]

    @property
    def supervisor_names(self) -> list[str]:
        """Runtime names of the supervisors (headcount renaming applied)."""
        return [name for member in self.members for name in member.spawned_names]

    @property
    def spawned_names(self) -> list[str]:
        """Runtime names of every agent the card spawns, in spawn order."""
        return [name for node, _parent in self.iter_members() for name in node.spawned_names]

    @property
    def lead_name(self) -> str:
        """The member warned about the team budget: the first supervisor, else the entry point."""
        names = self.supervisor_names
        return names[0] if names else self.entry_point.name

    @property
    def default_message_type(self) -> type[Message] | None:
        """The class a plain string sent to the team is wrapped in (``message_types[0]``)."""
        return self.message_types[0] if self.message_types else None

    def _tree_nodes(self) -> list[TreeNode]:
        nodes: list[TreeNode] = []
        stack: list[tuple[TeamCardMember, Location]] = [
            (member, ("members", index))
            for index, member in reversed(list(enumerate(self.members)))
        ]
        stack.append((self.entry_point, ("entry_point",)))
        while stack:
            node, location = stack.pop()
            nodes.append(TreeNode(location, node.name, node.headcount))
            stack.extend(
                (child, (*location, "members", index))
                for index, child in reversed(list(enumerate(node.members)))
            )
        return nodes

    # -- YAML -------------------------------------------------------------
    def to_data(self) -> dict[str, Any]:
        """A plain mapping in the hand-written card format (no redundant type tags)."""
        from akgentic.team.card_yaml import card_to_data

        return card_to_data(self)

    def to_yaml(self) -> str:
        """The card as YAML; :meth:`from_yaml` reads it back to an equal card."""
        from akgentic.team.card_yaml import dump_yaml

        return dump_yaml(self.to_data())

    @classmethod
    def from_yaml(cls, text: str, source: str = "<string>") -> TeamCard:
        """Parse and validate a YAML card.

        Raises :class:`~akgentic.team.card_yaml.TeamCardValidationError` listing
        every problem with its location (line numbers included).
        """
        from akgentic.team.card_yaml import parse_team_card

        return parse_team_card(text, source)

    @classmethod
    def from_file(cls, path: str | Path) -> TeamCard:
        """Read and validate a YAML card file (see :meth:`from_yaml`)."""
        from akgentic.team.card_yaml import load_team_card

        return load_team_card(path)
