"""Team-card YAML for tests: the two small teams many test files write to a card file.

- :func:`entry_echo_team_yaml`: an ``@Entry`` member and one member beside it, both of
  one agent class, talking :class:`~akgentic.core.messages.message.UserMessage` (the
  team of the CLI, ownership and store tests; no model);
- :func:`human_worker_team_yaml`: ``@Human`` (a
  :class:`~akgentic.agent.HumanProxy`) as the entry point and one
  :class:`~akgentic.agent.BaseAgent` worker on a model, talking
  :class:`~akgentic.agent.AgentMessage`.

Both return the text of a card file (``akgentic team create CARD``, the console's
``POST /api/teams``, :meth:`TeamCard.from_yaml <akgentic.team.card.TeamCard.from_yaml>`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from akgentic.team.card_yaml import dump_yaml

__all__ = ["entry_echo_team_yaml", "human_worker_team_yaml"]


def entry_echo_team_yaml(
    name: str,
    agent_class: str,
    *,
    member_name: str = "@Echo",
    metadata_type: str | None = None,
) -> str:
    """A card of two ``agent_class`` members: ``@Entry`` (its entry point) and ``member_name``.

    The member's role is its name without the ``@`` and its description that role in
    lower case (``@Echo``: role ``Echo``, description ``echo``). ``metadata_type`` is the
    dotted path of the card's metadata model, if any. Each argument is written as a plain
    YAML scalar (names and dotted paths need no quoting), one field to a line, so a test
    may edit the text to make a card wrong on a known line.
    """
    role = member_name.removeprefix("@")
    text = f"""\
name: {name}
entry_point:
  card:
    agent_class: {agent_class}
    description: entry
    config: {{name: "@Entry", role: Entry}}
members:
  - card:
      agent_class: {agent_class}
      description: {role.lower()}
      config: {{name: "{member_name}", role: {role}}}
message_types: [akgentic.core.messages.message.UserMessage]
"""
    if metadata_type is not None:
        text += f"metadata_type: {metadata_type}\n"
    return text


def human_worker_team_yaml(
    name: str,
    *,
    model_cfg: Mapping[str, object],
    description: str | None = None,
    human_description: str = "The person",
    worker: str = "@Worker",
    role: str = "Worker",
    worker_description: str = "Works",
    prompt: str | None = None,
    runtime_cfg: Mapping[str, object] | None = None,
    tools: Sequence[Mapping[str, object]] = (),
) -> str:
    """A card entered through ``@Human``, with one BaseAgent ``worker`` on ``model_cfg``.

    ``model_cfg`` and ``runtime_cfg`` are the worker's config sections as plain data
    (``{"provider": "openai-chat", "model": ..., "base_url": ...}``); ``prompt`` is its
    prompt template; ``tools`` its tool cards (``{"card": "planning", ...}``).
    """
    config: dict[str, object] = {"name": worker, "role": role}
    if prompt is not None:
        config["prompt"] = {"template": prompt}
    config["model_cfg"] = dict(model_cfg)
    if runtime_cfg is not None:
        config["runtime_cfg"] = dict(runtime_cfg)
    if tools:
        config["tools"] = [dict(tool) for tool in tools]
    card: dict[str, object] = {"name": name}
    if description is not None:
        card["description"] = description
    card["entry_point"] = {
        "card": {
            "agent_class": "akgentic.agent.HumanProxy",
            "description": human_description,
            "config": {"name": "@Human", "role": "Human"},
        }
    }
    card["members"] = [
        {
            "card": {
                "agent_class": "akgentic.agent.BaseAgent",
                "description": worker_description,
                "config": config,
            }
        }
    ]
    card["message_types"] = ["akgentic.agent.AgentMessage"]
    return dump_yaml(card)
