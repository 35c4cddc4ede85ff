"""``akgentic demo`` (what ``make demo`` runs): the bundled team, start to resume.

The demo creates the team of ``examples/demo-team.yaml`` (a manager, and a researcher
profile it may hire), asks it a question, and prints every message as it is sent: the
manager hires a researcher, delegates, and answers the human. It then stops the team,
resumes it from the event store and asks a follow-up that can only be answered from the
conversation that was restored.

Which model answers:

- ``--model provider:model`` (``--base-url URL``), or ``AKGENTIC_MODEL`` (e.g.
  ``openai-chat:llama3.1`` with ``OPENAI_BASE_URL=http://localhost:11434/v1``),
  replaces every agent's model (:mod:`akgentic.cli.models`);
- otherwise, with ``OPENAI_API_KEY`` set, the model the card names is used;
- otherwise a **scripted model**: :class:`DemoScript` answers through
  :class:`~akgentic.llm.scripted_server.ScriptedLLMServer`, started in this process on
  127.0.0.1, so the agents run their real code path (OpenAI client, HTTP, pydantic-ai,
  structured output, routing, hiring) with no network.

The store is a SQLite file in a temporary directory, removed at the end, unless
``--store URL`` names one to keep.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from akgentic.cli.models import (
    MODEL_ENV_VAR,
    BaseUrlOption,
    ModelOption,
    allow_base_url,
    describe,
    model_override,
    use_model,
)
from akgentic.cli.session import (
    ConversationPrinter,
    StoreOption,
    cli_errors,
    fail,
    import_roots,
    managed_teams,
    open_store,
    run_alone,
)

if TYPE_CHECKING:
    from akgentic.llm.config import ModelConfig
    from akgentic.llm.scripted_server import ScriptStep
    from akgentic.team.card import TeamCard

__all__ = [
    "DEMO_CARD",
    "FOLLOW_UP",
    "QUESTION",
    "DemoScript",
    "ModelChoice",
    "choose_model",
    "demo_command",
    "use_model",
]

DEMO_CARD = Path(__file__).resolve().parents[2] / "examples" / "demo-team.yaml"
QUESTION = "What makes octopuses such unusual animals?"
#: A first turn of a small model on a laptop CPU took about 3 minutes (184 s for Gemma 3
#: 270M on llama.cpp, prompt processing dominating); 600 s leaves room for a hire and a
#: delegation on such a model while a hung server still ends the demo.
DEMO_TIMEOUT = 600.0
FOLLOW_UP = "We were interrupted. What did the researcher tell you before the restart?"

_RECEIVED = re.compile(r"You received an? (\w+) from (\S+?)\. [^\n]*\n\n", re.MULTILINE)
_FACTS = (
    "1) An octopus has three hearts and blue, copper-based blood. "
    "2) Most of its neurons are in its arms, which can taste what they touch. "
    "3) It can change colour and skin texture in a fraction of a second."
)


# ------------------------------------------------------------------ model choice


@dataclass(frozen=True)
class ModelChoice:
    """The model the demo runs on: ``config`` replaces the card's (None keeps it)."""

    label: str
    config: ModelConfig | None = None
    scripted: bool = False


def choose_model(
    env: Mapping[str, str], model: str | None = None, base_url: str | None = None
) -> ModelChoice:
    """``--model`` or ``AKGENTIC_MODEL``, else the card's model with ``OPENAI_API_KEY``, else
    scripted."""
    config = model_override(model, base_url, env)
    if config is not None:
        origin = "--model" if model else MODEL_ENV_VAR
        return ModelChoice(f"{describe(config)} (from {origin})", config)
    if env.get("OPENAI_API_KEY"):
        return ModelChoice("the model named in the card (OPENAI_API_KEY is set)")
    return ModelChoice(
        "scripted model: pre-written replies served by a local OpenAI-compatible server "
        f"(set OPENAI_API_KEY or {MODEL_ENV_VAR}=provider:model for a real one)",
        scripted=True,
    )


# ------------------------------------------------------------------ scripted model


def _texts(body: Mapping[str, Any], role: str) -> list[str]:
    """The texts of the chat messages of ``role`` in a Chat Completions request body."""
    found: list[str] = []
    for message in body.get("messages", []):
        if message.get("role") != role:
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        if isinstance(content, str):
            found.append(content)
    return found


def _received(text: str) -> list[tuple[str, str, str]]:
    """Every ``(intent, sender, content)`` rendered in ``text`` by ``AgentMessage``."""
    marks = list(_RECEIVED.finditer(text))
    items: list[tuple[str, str, str]] = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
        items.append((mark.group(1), mark.group(2), text[mark.end() : end].strip()))
    return items


class DemoScript:
    """A rule-based stand-in for a model, playing the demo's two roles.

    It reads the conversation the agent sent (a Chat Completions body) and answers
    with a ``StructuredOutput``, exactly as a model would:

    - a request from the human, with nothing learnt yet: hire ``hire_role`` with it;
    - a request from anyone else: answer it with three facts;
    - a response from a colleague: pass it on to the human;
    - a request from the human when a colleague already answered earlier in the
      conversation: answer from that memory (this is what shows a restored history).
    """

    def __init__(self, human: str, hire_role: str) -> None:
        self.human = human
        self.hire_role = hire_role

    def __call__(self, body: dict[str, Any]) -> ScriptStep:
        from akgentic.agent.output_models import Request, StructuredOutput
        from akgentic.llm.scripted_server import structured

        user = _texts(body, "user")
        latest = _received(user[-1]) if user else []
        earlier = [item for text in user[:-1] for item in _received(text)]
        requests: list[Request] = []
        if latest:
            intent, sender, content = latest[-1]
            findings = [c for i, s, c in earlier if i == "response" and s != self.human]
            asked = [c for i, s, c in earlier if i == "request" and s == self.human]
            if intent == "request" and sender == self.human and findings:
                before = f' You had asked: "{asked[0]}"' if asked else ""
                requests.append(
                    Request(
                        recipient=self.human,
                        message_type="response",
                        message=f"From our earlier conversation.{before} "
                        f"The researcher reported: {findings[-1]}",
                    )
                )
            elif intent == "request" and sender == self.human:
                requests.append(
                    Request(
                        recipient=self.hire_role,
                        message_type="request",
                        message=f"Please look into this for {self.human}: {content}",
                    )
                )
            elif intent == "request":
                requests.append(Request(recipient=sender, message_type="response", message=_FACTS))
            elif intent == "response" and sender != self.human:
                requests.append(
                    Request(
                        recipient=self.human,
                        message_type="response",
                        message=f"Here is what {sender} found. {content}",
                    )
                )
        return structured(StructuredOutput(messages=requests))


@contextmanager
def _scripted_server(card: TeamCard) -> Iterator[ModelConfig]:
    from akgentic.llm.scripted_server import ScriptedLLMServer

    human = card.entry_point.card.config.name
    roles = [profile.role for profile in card.agent_profiles]
    if not roles:
        fail("the scripted model needs a card with at least one agent profile to hire", 2)
    with ScriptedLLMServer(fallback=DemoScript(human, roles[0])) as server:
        yield server.model_config()


# ------------------------------------------------------------------ the demo


def _transcript(events: list[Any]) -> list[str]:
    from akgentic.core.messages.orchestrator import SentMessage

    lines: list[str] = []
    for stored in events:
        message = stored.event
        content = getattr(getattr(message, "message", None), "content", None)
        if isinstance(message, SentMessage) and isinstance(content, str):
            sender = message.sender.name if message.sender is not None else "?"
            lines.append(f"{sender} → {message.recipient.name}: {content}")
    return lines


def _wait(runtime: Any, timeout: float, console: Console) -> bool:
    if runtime.wait_idle(timeout):
        return True
    console.print(f"[yellow]the team was still busy after {timeout:g} s[/yellow]")
    return False


def _run_demo(console: Console, card: TeamCard, store_url: str, timeout: float) -> bool:
    """The demo proper; True when every step finished in time."""
    printer = ConversationPrinter(console, rich=True)
    with managed_teams(open_store(store_url, must_exist=False), printer) as manager:
        console.rule("1. create the team and ask a question")
        runtime = manager.create_team(card)
        runtime.send(QUESTION)
        answered = _wait(runtime, timeout, console)
        roster = sorted(m.name for m in runtime.members if not m.name.startswith("#"))

        console.rule("2. stop the team")
        manager.stop_team(runtime.id)
        store = manager.event_store
        saved = store.load_events(runtime.id)
        console.print(f"team {runtime.id} stopped; {len(saved)} events are in the store")

        console.rule("3. resume it from the store")
        resumed = manager.resume_team(runtime.id)
        back = sorted(m.name for m in resumed.members if not m.name.startswith("#"))
        console.print(f"members before the stop: {', '.join(roster)}", soft_wrap=True)
        console.print(f"members after the resume: {', '.join(back)}", soft_wrap=True)
        console.print("conversation restored from the store:")
        for line in _transcript(saved):
            console.print(f"  {line}", soft_wrap=True, markup=False)
        console.print("asking a question only the restored conversation can answer:")
        resumed.send(FOLLOW_UP)
        followed = _wait(resumed, timeout, console)
        manager.stop_team(resumed.id)
        total = len(store.load_events(resumed.id))
        console.print(f"team stopped again; {total} events are in the store")
    return answered and followed


def demo_command(
    store: StoreOption = None,
    card: Annotated[
        Path | None,
        typer.Option("--card", help="Team card to run (default: examples/demo-team.yaml)."),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for each answer.")
    ] = DEMO_TIMEOUT,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
) -> None:
    """Run the demo team: hire, delegate, answer; stop; resume from the store; ask again."""
    from akgentic.cli.logs import configure_logging
    from akgentic.team.card_yaml import load_team_card

    configure_logging(debug=False)  # a failed turn: the printer's one line, no traceback
    console = Console(highlight=False)
    path = card or DEMO_CARD
    with cli_errors():
        if not path.exists():
            fail(f"no demo card at {path} (give one with --card)", 1)
        import_roots(path, None)
        team_card = load_team_card(path)
        choice = choose_model(os.environ, model, base_url)
        if base_url and choice.config is not None:
            allow_base_url(base_url)
        console.rule("akgentic demo")
        console.print(f"team card: {path}", soft_wrap=True)
        console.print(f"model: {choice.label}", soft_wrap=True)
        with tempfile.TemporaryDirectory(prefix="akgentic-demo-") as scratch:
            url = store or f"sqlite:///{Path(scratch) / 'demo.db'}"
            console.print(f"store: {url}", soft_wrap=True)
            if choice.scripted:
                with _scripted_server(team_card) as config:
                    use_model(team_card, config)
                    ok = _run_demo(console, team_card, url, timeout)
            else:
                if choice.config is not None:
                    use_model(team_card, choice.config)
                ok = _run_demo(console, team_card, url, timeout)
        console.rule("done" + (" (scripted model)" if choice.scripted else ""))
        if not ok:
            fail("the demo did not finish in time (see above)", 1)


def _main() -> None:  # pragma: no cover - exercised through subprocesses
    run_alone(
        "demo",
        demo_command,
        "akgentic demo, on its own (before it is mounted in the main application).",
        no_args_is_help=False,
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    _main()
