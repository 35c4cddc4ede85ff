"""A scripted model for a whole team: what each member's model answers, step by step.

A team script is a YAML file listing, per member (by ``config.name`` such as
``"@Shouter"``, or by role), the replies its model gives, in order::

    members:
      "@Shouter":
        - tool: shout                      # call a tool of the member's cards
          args: {text: fire in the hold}
        - send:                            # a BaseAgent answer: messages to members
            - to: "@Human"
              message: Shouted it.         # type defaults to response
      Researcher:                          # a role: a profile hired at run time
        - text: plain assistant text       # for agents that answer in text

Each step is one model reply: ``tool`` (+ ``args``) calls a tool, ``tools`` calls
several at once, ``send`` answers with a ``StructuredOutput`` (each message ``to``,
``message``, ``type``), ``output`` returns any JSON value as structured output and
``text`` plain text. A member whose steps are used up gets an HTTP 400 saying so.

:func:`scripted_team` starts one :class:`~akgentic.llm.scripted_server.ScriptedLLMServer`
on 127.0.0.1 and points every scripted member at it, each under a model name of its
own, so the real client, HTTP and pydantic-ai code paths run with no network.
``akgentic run CARD --scripted SCRIPT.yaml`` and ``akgentic team create
--scripted`` are built on it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from akgentic.llm.scripted_server import (
    ScriptedLLMServer,
    ScriptStep,
    ToolCallSpec,
    error,
    structured,
    text,
)

if TYPE_CHECKING:
    from akgentic.team.card import TeamCard

__all__ = [
    "MemberStep",
    "MessageSpec",
    "TeamScript",
    "TeamScriptError",
    "ToolCallStep",
    "load_team_script",
    "scripted_team",
]

#: Prefix of the model name each scripted member is given (``scripted:@Shouter``).
MODEL_PREFIX = "scripted:"


class TeamScriptError(ValueError):
    """A team script that cannot be read or does not fit its card."""


class ToolCallStep(BaseModel):
    """One tool call of a ``tools`` step."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class MessageSpec(BaseModel):
    """One message of a ``send`` step: recipient, text and intent."""

    model_config = ConfigDict(extra="forbid")

    to: str
    message: str
    type: str = "response"


class MemberStep(BaseModel):
    """One model reply; exactly one of ``tool``, ``tools``, ``send``, ``output``, ``text``."""

    model_config = ConfigDict(extra="forbid")

    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    tools: list[ToolCallStep] | None = None
    send: list[MessageSpec] | None = None
    output: Any = None
    text: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> MemberStep:
        given = self.model_fields_set
        kinds = [k for k in ("tool", "tools", "send", "output", "text") if k in given]
        if len(kinds) != 1:
            raise ValueError(
                "a step is exactly one of tool (with args), tools, send, output or text; "
                f"got {', '.join(kinds) or 'none'}"
            )
        if self.args and self.tool is None:
            raise ValueError("args belong to a tool step")
        return self

    def reply(self) -> ScriptStep:
        """The scripted server's reply for this step."""
        if self.tool is not None:
            return ScriptStep(tool_calls=(ToolCallSpec(self.tool, self.args),))
        if self.tools is not None:
            return ScriptStep(tool_calls=tuple(ToolCallSpec(c.tool, c.args) for c in self.tools))
        if self.send is not None:
            messages = [
                {"recipient": m.to, "message_type": m.type, "message": m.message} for m in self.send
            ]
            return structured({"messages": messages})
        if self.text is not None:
            return text(self.text)
        return structured(self.output)


class TeamScript(BaseModel):
    """The replies of each scripted member, keyed by ``config.name`` or role."""

    model_config = ConfigDict(extra="forbid")

    members: dict[str, list[MemberStep]]


def load_team_script(path: str | Path) -> TeamScript:
    """Read a team script file; :class:`TeamScriptError` lists every problem."""
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TeamScriptError(f"{file}: cannot read the team script: {exc}") from None
    try:
        return TeamScript.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in item['loc']) or '(script)'}: {item['msg']}"
            for item in exc.errors(include_url=False)
        ]
        raise TeamScriptError(f"{file}: invalid team script:\n  " + "\n  ".join(problems)) from None


class _Dispatcher:
    """Answers each request from the steps of the member its model name belongs to."""

    def __init__(self, steps: dict[str, list[MemberStep]]) -> None:
        self._steps = {key: deque(items) for key, items in steps.items()}
        self._played = dict.fromkeys(steps, 0)
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> ScriptStep:
        model = str(body.get("model", ""))
        key = model.removeprefix(MODEL_PREFIX)
        with self._lock:
            queue = self._steps.get(key)
            if queue is None:
                return error(400, f"team script: no member is scripted as model {model!r}")
            if not queue:
                return error(
                    400,
                    f"team script: {key} has no step left ({self._played[key]} played); "
                    "add steps to its list",
                )
            self._played[key] += 1
            step = queue.popleft()
        return step.reply()

    def remaining(self) -> dict[str, int]:
        with self._lock:
            return {key: len(queue) for key, queue in self._steps.items()}


def _llm_cards(card: TeamCard) -> list[tuple[str, str, Any]]:
    """(name, role, config) of every LLM member and profile of ``card``."""
    from akgentic.agent.config import AgentConfig

    found: list[tuple[str, str, Any]] = []
    agent_cards = [node.card for node, _parent in card.iter_members()] + list(card.agent_profiles)
    for agent_card in agent_cards:
        if isinstance(agent_card.config, AgentConfig):
            found.append((agent_card.config.name, agent_card.role, agent_card.config))
    return found


@contextmanager
def scripted_team(card: TeamCard, script: TeamScript) -> Iterator[ScriptedLLMServer]:
    """Serve ``script`` and point the scripted members of ``card`` at it (card changed in place).

    Raises :class:`TeamScriptError` when a script key names no LLM member or profile
    of the card. Members the script does not name keep their own model.
    """
    members = _llm_cards(card)
    known = {name for name, _role, _config in members} | {role for _n, role, _c in members}
    unknown = sorted(set(script.members) - known)
    if unknown:
        listed = ", ".join(sorted(known)) or "none"
        raise TeamScriptError(
            f"the team script names {', '.join(unknown)}, which no LLM member or profile of "
            f"the card is (by config.name or role: {listed})"
        )
    dispatcher = _Dispatcher(script.members)
    with ScriptedLLMServer(fallback=dispatcher) as server:
        for name, role, config in members:
            key = name if name in script.members else role if role in script.members else None
            if key is not None:
                config.model_cfg = server.model_config(model=f"{MODEL_PREFIX}{key}")
                config.model_roster = []
        yield server
