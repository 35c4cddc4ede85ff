"""``BaseAgent``: an actor whose turns are run by a language model.

One turn, for an incoming :class:`AgentMessage`:

1. a ``/command`` line from a human (a user proxy, or a member named in
   ``config.command_senders``) is dispatched through the agent's command registry (one
   recorded operator action, a notification back to the sender); an unknown command,
   or a ``/`` line from another agent, is treated as ordinary text;
2. otherwise :meth:`BaseAgent.act` delivers the per-turn context-update block, then
   runs the model on the message as rendered for the receiver (reply guidance first);
3. :meth:`BaseAgent._route_output` delivers each requested message: ``@Name`` to that
   member, a role name to a newly hired member of that role.

Everything that needs pydantic-ai (the ReactAgent, the run hooks) is
built in :meth:`BaseAgent.on_start`, on the actor's own thread, so importing this
module stays cheap.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from akgentic.agent.config import AgentConfig, AgentState
from akgentic.agent.messages import AgentMessage
from akgentic.agent.output_models import StructuredOutput
from akgentic.agent.routing import TeamDirectory, resolve_recipient
from akgentic.agent.usage_limits import guard_usage_limits
from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent import Akgent, WarningError
from akgentic.core.messages.message import CancelMessage, Message
from akgentic.core.orchestrator import TOOL_ACTOR_PREFIX
from akgentic.llm.errors import (
    RunCancelledError,
    RunStoppedError,
    TurnFailedError,
    UsageLimitError,
)
from akgentic.tool.commands import RestOfLine
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.context_update import ContextUpdater
from akgentic.tool.core.event import CommandsAnnouncedEvent
from akgentic.tool.core.factory import ToolFactory
from akgentic.tool.errors import CommandNotRecognized, RetriableError
from akgentic.tool.mailbox import MailboxTool, RunInterruptedError
from akgentic.tool.model import ModelRow
from akgentic.tool.team import TeamTool

if TYPE_CHECKING:
    from akgentic.agent.budget_guard import BudgetGuard
    from akgentic.llm.agent import ReactAgent
    from akgentic.llm.pricing import AgentUsageSummary
    from akgentic.llm.run_hooks import RunHook
    from akgentic.tool.commands import CommandRegistry

__all__ = ["BaseAgent"]

logger = logging.getLogger(__name__)

OutputT = TypeVar("OutputT")


def operator_action_note(command: str, result: str) -> str:
    """The note recorded in the model's context after a person ran a command."""
    return f'**Operator action** — a person ran "{command}" on you.\nOutcome:\n{result}'


class BaseAgent(Akgent[AgentConfig, AgentState]):
    """An LLM agent of a team: receives AgentMessages, thinks, routes StructuredOutput.

    Carries MailboxTool and TeamTool in addition to ``config.tools`` (added at start
    when absent; the configuration itself is not changed). Override points:
    :meth:`create_llm_model` (a model object to use instead of ``config.model_cfg``,
    e.g. a pydantic-ai ``FunctionModel`` in tests) and :meth:`extra_hooks`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._react_agent: ReactAgent[BaseAgent] | None = None
        self._tool_factory: ToolFactory | None = None
        self._command_registry: CommandRegistry | None = None
        self._context_updater: ContextUpdater | None = None
        self._unusable_model_key: str | None = None
        self._budget_guard: BudgetGuard | None = None
        self._command_sender: ActorAddress | None = None

    # ------------------------------------------------------------- lifecycle

    def on_start(self) -> None:
        """Build tools, the ReactAgent and the command registry; announce the commands."""
        from pydantic_ai import ModelRetry

        from akgentic.agent.budget_guard import BudgetGuard
        from akgentic.agent.hooks import MailboxHook, RecipientCheckHook
        from akgentic.llm.agent import ReactAgent

        if self.orchestrator is None:
            logger.warning("%s has no orchestrator: it cannot hire or reach anyone", self.name)
        self.state = AgentState(backstory=self.config.prompt.render()).observer(self)
        cards = self.tool_cards()
        factory = ToolFactory(cards, observer=self, retry_exception=ModelRetry)
        self._tool_factory = factory
        self._context_updater = factory.get_context_updater()
        mailbox = next((c for c in cards if isinstance(c, MailboxTool)), None)
        guard = BudgetGuard(self)
        self._budget_guard = guard
        hooks = [
            # First: a human's /budget line waiting in the inbox is taken before the
            # mailbox hook would announce it to the model.
            guard,
            MailboxHook(announce=mailbox is not None and mailbox.signals_enabled),
            RecipientCheckHook(),
            *self.extra_hooks(),
        ]
        react: ReactAgent[BaseAgent] = ReactAgent(
            self.config.react_agent_config(),
            deps_type=BaseAgent,
            tools=factory.get_tools(),
            toolsets=factory.get_toolsets() or None,
            result_type=StructuredOutput,
            observer=self,
            model=self.create_llm_model(),
            hooks=hooks,
        )
        self._react_agent = react
        react.subscribe_context(guard)  # charges the team budget after each response

        def agent_backstory() -> str:
            return self.state.backstory

        def current_date() -> str:
            return f"Today's date is {date.today().isoformat()}."

        react.system_prompt(agent_backstory)
        react.system_prompt(current_date)
        for prompt in factory.get_system_prompts():
            react.system_prompt(prompt)
        self._command_registry = factory.get_command_registry(
            extra_commands=[self.compact, self.clear, self.budget]
        )
        self.notify_event(
            CommandsAnnouncedEvent(
                agent=self.myAddress, commands=self._command_registry.descriptors()
            )
        )

    def interrupt(self) -> None:
        """Cancel the model run in flight (any thread): the agent is being stopped."""
        react = self._react_agent
        if react is not None:
            react.interrupt()

    def cancel_requested(self, message: Message) -> None:
        """End the run in flight now when ``message`` is a ``/stop`` this agent obeys (any thread).

        The message stays queued: the run's end takes it out (:meth:`act`), so the
        human is told once, and a cancel that finds no run is answered as when idle.
        """
        react = self._react_agent
        if react is None:
            return
        from akgentic.agent.hooks import is_cancel

        if is_cancel(self, message):
            react.cancel_run()
        guard = self._budget_guard
        content = getattr(message, "content", None)
        if (
            guard is not None
            and isinstance(content, str)
            and content.lstrip().startswith("/budget")
        ):
            guard.wake()  # a run waiting for a raise takes the line now

    def on_stop(self) -> None:
        """Release the model clients and the event loop, then report the stop."""
        react = self._react_agent
        if react is not None:
            try:
                react.close()
            except Exception:
                logger.warning("closing the LLM agent of %s failed", self.name, exc_info=True)
        super().on_stop()

    # ---------------------------------------------------------- override points

    def tool_cards(self) -> list[ToolCard]:
        """``config.tools`` with MailboxTool and TeamTool put first when missing."""
        cards = list(self.config.tools)
        if not any(isinstance(c, TeamTool) for c in cards):
            cards.insert(0, TeamTool())
        if not any(isinstance(c, MailboxTool) for c in cards):
            cards.insert(0, MailboxTool())
        return cards

    def create_llm_model(self) -> Any:
        """A pydantic-ai model object to run instead of ``config.model_cfg`` (None: build it)."""
        return None

    def extra_hooks(self) -> list[RunHook]:
        """More run hooks (:class:`~akgentic.llm.run_hooks.RunHook`), called after the built-ins."""
        return []

    # ------------------------------------------------------------ accessors

    @property
    def name(self) -> str:
        """The agent's name (``config.name``)."""
        return self.config.name

    @property
    def react_agent(self) -> ReactAgent[BaseAgent]:
        """The LLM agent built at start."""
        if self._react_agent is None:
            raise RuntimeError(f"{self.name} has not started: no LLM agent yet")
        return self._react_agent

    @property
    def command_registry(self) -> CommandRegistry:
        """The slash-command registry built at start."""
        if self._command_registry is None:
            raise RuntimeError(f"{self.name} has not started: no command registry yet")
        return self._command_registry

    def current_message(self) -> Message | None:
        """The message whose turn is running, if any."""
        return self._current_message

    # -------------------------------------------------------------- handlers

    def receiveMsg_AgentMessage(self, message: AgentMessage, sender: ActorAddress | None) -> None:
        """Run a slash command, or think about the message and send what the model decides."""
        if self._answers_budget_question(message, sender):
            return
        if (
            message.content.lstrip().startswith("/")
            and self.accepts_commands_from(sender)
            and self._dispatch_command(message, sender)
        ):
            return
        try:
            output = self.act(message, StructuredOutput)
        except RunStoppedError:
            # Stopping: the team's history ends with its stop, so nothing more is said.
            logger.info("%s: run ended by the stop", self.name)
            return
        self._route_output(output)

    def receiveMsg_CancelMessage(self, message: CancelMessage) -> None:
        """A cancel that arrives while idle has nothing to stop."""
        logger.info("%s: cancel received while idle; nothing to stop", self.name)

    def accepts_commands_from(self, sender: ActorAddress | None) -> bool:
        """Whether a ``/`` line from ``sender`` runs as a slash command.

        Commands come from humans: a user proxy, or a member the card names in
        ``config.command_senders``. Otherwise one agent could drive another's
        ``/stop`` or ``/hire_member`` just by writing a line that starts with ``/``.
        """
        if sender is None:
            return False
        if sender.is_user_proxy:
            return True
        allowed = self.config.command_senders
        return sender.name in allowed or sender.role in allowed

    def _answers_budget_question(self, message: AgentMessage, sender: ActorAddress | None) -> bool:
        """Take a human's plain answer (``raise usd=5``, ``stop``) to the budget question.

        A ``/budget`` line is a command like any other; this is for the answer typed
        without the ``/`` in reply to the question this team asked.
        """
        guard = self._budget_guard
        if (
            guard is None
            or sender is None
            or not sender.is_user_proxy
            or message.parent_id is None
            or message.content.lstrip().startswith("/")
        ):
            return False
        line = guard.answer_line(message)
        if line is None:
            return False
        from akgentic.agent.team_budget import budget_command

        result = budget_command(self, line, sender)
        self.send(sender, AgentMessage(content=result, type="notification"))
        self.react_agent.context.append_user_prompt(operator_action_note(f"/budget {line}", result))
        return True

    def _dispatch_command(self, message: AgentMessage, sender: ActorAddress | None) -> bool:
        """Run ``message`` as a command; False when its first word is not a command."""
        line = message.content.strip()
        self._command_sender = sender  # commands that only a human may run check it
        try:
            result = self.command_registry.dispatch(line)
        except CommandNotRecognized:
            return False
        finally:
            self._command_sender = None
        if result is None:
            return True
        if sender is not None:
            self.send(sender, AgentMessage(content=result, type="notification"))
        self.react_agent.context.append_user_prompt(operator_action_note(line, result))
        return True

    # ------------------------------------------------------------------ turns

    @guard_usage_limits
    def act(self, message: AgentMessage, output_type: type[OutputT]) -> OutputT:
        """Run the model on ``message`` and return its ``output_type`` answer.

        The context-update block (if any) goes into the history first. A run cancelled
        mid-flight tells the human and returns an empty ``output_type()``.
        """
        react = self.react_agent
        self._apply_model_selection()
        updater = self._context_updater
        if updater is not None:
            block = updater.compose_update(react.context.messages)
            if block:
                react.context.append_user_prompt(block)
        prompt: Any = self._expand_media(message.rendering())
        try:
            output: OutputT = react.run_sync(prompt, deps=self, output_type=output_type)
        except (RunInterruptedError, RunCancelledError):
            self._take_queued_cancels()
            logger.info("%s: run interrupted", self.name)
            self.notify_human(f"{self.name} stopped its run as asked.")
            try:
                return output_type()
            except Exception:
                raise RunInterruptedError(f"{self.name}: run cancelled") from None
        except RunStoppedError:
            raise  # stopping: the team's log ends with its stop, so no TurnFailed follows
        except (WarningError, UsageLimitError) as exc:
            self._record_turn_failure(exc)
            raise  # reported as a warning (a usage limit: the human is told first)
        except Exception as exc:
            raise self._record_turn_failure(exc) from exc
        return output

    def _take_queued_cancels(self) -> None:
        """Take out the ``/stop`` that ended the run (and any other): it has been obeyed."""
        from akgentic.agent.hooks import is_cancel

        cancels = [m.id for m in self.get_mailbox() if is_cancel(self, m)]
        if cancels:
            self.consume_mailbox(cancels)

    def _record_turn_failure(self, exc: Exception) -> TurnFailedError:
        """Record a :class:`TurnFailed` event for ``exc``; the error that says it in one line."""
        from akgentic.llm.events import TurnFailed
        from akgentic.llm.failures import describe_failure

        kind, cause = describe_failure(exc, self.react_agent.active_model())
        self.notify_event(TurnFailed(cause=cause, kind=kind, error_type=type(exc).__name__))
        return TurnFailedError(cause, kind)

    def _expand_media(self, prompt: str) -> Any:
        registry = self._command_registry
        if registry is None or "!!" not in prompt or not registry.has("_expand_media_refs"):
            return prompt
        expanded = registry.callable("_expand_media_refs")(prompt)
        return prompt if expanded == prompt else expanded

    def _route_output(self, output: Any) -> bool:
        """Deliver every request of ``output``; True when at least one was sent."""
        if not isinstance(output, StructuredOutput):
            return False
        sent = False
        for request in output.messages:
            member = resolve_recipient(self, request.recipient)
            if member is None:
                continue
            self.send(member, AgentMessage(content=request.message, type=request.message_type))
            sent = True
        return sent

    # ------------------------------------------------------------------ team

    def hire_member(self, role: str) -> ActorAddress:
        """Hire a member of ``role`` through the registry's ``hire_member`` command."""
        registry = self.command_registry
        if not registry.has("hire_member"):
            raise RuntimeError("hire_member command not available: TeamTool is not configured")
        hire = registry.callable("hire_member")
        return cast(ActorAddress, hire(role))

    def on_hire(self, address: ActorAddress) -> None:
        """Called after this agent hired ``address`` (no-op)."""

    def on_fire(self, address: ActorAddress) -> None:
        """Called after this agent fired ``address`` (no-op)."""

    def team_directory(self) -> TeamDirectory:
        """Members this agent may address and the roles it may hire right now."""
        if self.orchestrator is None:
            return TeamDirectory(members=(), hireable_roles=())
        return TeamDirectory(members=self._member_names(), hireable_roles=self._role_names())

    def _member_names(self) -> tuple[str, ...]:
        me = self.agent_id
        return tuple(
            m.name
            for m in self.get_team()
            if m.agent_id != me and not m.name.startswith(TOOL_ACTOR_PREFIX)
        )

    def _role_names(self) -> tuple[str, ...]:
        return tuple(self.discover_catalog())  # every catalog role can be hired

    def unreachable_recipients(self, recipients: Sequence[str]) -> tuple[list[str], TeamDirectory]:
        """The recipients of ``recipients`` nobody can reach, and the directory that says so.

        With :meth:`team_directory` not overridden, a list whose recipients all resolve
        asks the orchestrator only for what they need (members for ``@names``, the
        catalog for roles); the full directory is built when one is unreachable.
        """
        if type(self).team_directory is BaseAgent.team_directory and self.orchestrator is not None:
            names = [r.strip() for r in recipients]
            wants_members = any(n.startswith("@") for n in names)
            wants_roles = not all(n.startswith("@") for n in names)
            partial = TeamDirectory(
                members=self._member_names() if wants_members else (),
                hireable_roles=self._role_names() if wants_roles else (),
            )
            if all(partial.reachable(r) for r in recipients):
                return [], partial
        directory = self.team_directory()
        return [r for r in recipients if not directory.reachable(r)], directory

    def human_address(self) -> ActorAddress | None:
        """The team's human (its first user proxy), or None."""
        return next((m for m in self._team_members() if m.is_user_proxy), None)

    def notify_human(self, text: str) -> None:
        """Send ``text`` as a notification to the team's user proxy (logged when none)."""
        human = self.human_address()
        if human is None:
            logger.warning("%s: no human to notify: %s", self.name, text)
            return
        self.send(human, AgentMessage(content=text, type="notification"))

    # --------------------------------------------------------------- mailbox

    def consume_mailbox(self, ids: Sequence[UUID] | Sequence[str]) -> list[Message]:
        """Absorb the named queued messages into the current run (actor thread only)."""
        return super().consume_mailbox(cast("list[UUID]", list(ids)))

    # --------------------------------------------------------------- context

    @guard_usage_limits
    def compact(self) -> str:
        """Fold older conversation history into a summary now."""
        return self.react_agent.compact()

    def clear(self) -> str:
        """Forget the whole conversation (the system prompt comes back next turn)."""
        result = self.react_agent.clear_context()
        if self._context_updater is not None:
            self._context_updater.reset()
        return result

    def budget(self, change: RestOfLine = "") -> str:
        """Show the team budget, or change it (humans only).

        Args:
            change: Nothing (show it); ``raise NAME=VALUE...`` (``usd=5``, ``requests=+100``);
                ``set NAME=VALUE...`` (may lower it; ``none`` lifts a limit); or ``stop``.
        """
        from akgentic.agent.team_budget import budget_command

        return budget_command(self, change, self._command_sender)

    def init_llm_context(self, events: Sequence[Any]) -> None:
        """Rebuild the conversation and the lifetime budget from stored events."""
        self.react_agent.restore_context(events)

    def get_usage_summary(self, by_run: bool = False) -> AgentUsageSummary:
        """This agent's LLM usage and estimated cost, from the team's usage events."""
        from akgentic.llm.events import LlmUsageEvent
        from akgentic.llm.pricing import aggregate_usage

        if self.orchestrator is None:
            return aggregate_usage([], by_run=by_run)
        found = self.orchestrator_proxy_ask.get_events(
            agent_id=self.agent_id, event_class=LlmUsageEvent
        )
        return aggregate_usage([m.event for m in found], by_run=by_run)

    # ----------------------------------------------------------- model switch

    def list_model_rows(self) -> list[ModelRow]:
        """The model roster as the tool layer shows it."""
        from akgentic.llm.config import model_roster_key

        react = self.react_agent
        active = model_roster_key(react.active_model())
        roster = react.model_roster()
        if not roster:
            return []  # a single declared model: nothing to switch to, nothing to list
        return [
            ModelRow(
                key=model_roster_key(cfg),
                provider=cfg.provider,
                model=cfg.model,
                context_length=cfg.context_length,
                active=model_roster_key(cfg) == active,
            )
            for cfg in roster
        ]

    def switch_model(self, key: str) -> str:
        """Make roster entry ``key`` the model from the next run on (kept across restores)."""
        from akgentic.llm.errors import ModelSwitchError

        try:
            self.react_agent.switch_model(key)
        except ModelSwitchError as error:
            raise RetriableError(str(error)) from error
        self.state.tool_state.active_model = key
        return f"Switched to {key} from the next turn."

    def _apply_model_selection(self) -> None:
        from akgentic.llm.config import model_roster_key
        from akgentic.llm.errors import ModelSwitchError

        wanted = self.state.tool_state.active_model
        react = self.react_agent
        if wanted is None or wanted == model_roster_key(react.active_model()):
            return
        if wanted == self._unusable_model_key:
            return  # already refused and reported; retrying every turn would only spam
        try:
            react.switch_model(wanted)
        except ModelSwitchError:
            self._unusable_model_key = wanted
            logger.warning("%s: stored model %r unusable; kept current", self.name, wanted)
