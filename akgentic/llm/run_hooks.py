"""Run hooks: the extension points inside a ReactAgent run.

Subclass :class:`RunHook` and override what you need; each hook receives a
:class:`RunView` of the run it is called in. ``BaseAgent`` mounts two (the mailbox
and the recipient check, in :mod:`akgentic.agent.hooks`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.usage import RunUsage

if TYPE_CHECKING:
    from akgentic.llm.turn import Turn

__all__ = ["RunHook", "RunView"]


class RunView:
    """What a :class:`RunHook` sees of the run it is called in.

    ``ctx`` is the pydantic-ai ``RunContext`` tools receive (``ctx.deps`` is the
    run's deps). ``enqueue`` adds a note for the model: it travels as a user
    prompt with the request being built (the one about to be sent, from
    ``before_model_request``; the next one, from ``after_tool_call``).
    """

    def __init__(self, turn: Turn) -> None:
        self._turn = turn

    @property
    def run_id(self) -> str:
        return self._turn.run_id

    @property
    def deps(self) -> Any:
        return self._turn.ctx.deps

    @property
    def ctx(self) -> RunContext[Any]:
        return self._turn.ctx

    @property
    def output_retries(self) -> int:
        """Output retries this run has used."""
        return self._turn.output_retries

    @property
    def max_output_retries(self) -> int:
        """Output retries a run may use; an output refused after that ends the run."""
        return self._turn.max_retries

    @property
    def usage(self) -> RunUsage:
        return self._turn.usage

    def enqueue(self, text: str) -> None:
        """Give the model ``text`` with the request being built."""
        self._turn.queued.append(text)


class RunHook:
    """Extension points of a run; subclass and override what you need.

    One hook object serves every run of an agent (use ``view.run_id`` to keep
    per-run state). Exceptions other than ``ModelRetry`` (where allowed) end the run.
    """

    async def before_model_request(self, view: RunView) -> None:
        """Called before each model request; may ``view.enqueue`` notes or raise to stop."""

    async def after_tool_call(
        self, view: RunView, call: ToolCallPart, args: dict[str, Any], result: Any
    ) -> Any:
        """Called after a function tool returned; returns what the model is given."""
        return result

    async def after_output(self, view: RunView, output: Any) -> Any:
        """Called on a validated final output; raise ``ModelRetry`` to send it back."""
        return output
