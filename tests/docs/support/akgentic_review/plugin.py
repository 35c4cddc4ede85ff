"""The hook implementations of ``akgentic_review``: its agent class and its message type."""

from collections.abc import Iterable

from akgentic.plugins import AgentClassSpec, MessageTypeSpec, hookimpl

from .agents import Reviewer
from .messages import ReviewRequest


@hookimpl
def akgentic_agent_classes() -> Iterable[AgentClassSpec]:
    return [AgentClassSpec(name="reviewer", agent_class=Reviewer)]


@hookimpl
def akgentic_message_types() -> Iterable[MessageTypeSpec]:
    return [
        MessageTypeSpec(
            name="ReviewRequest",
            message_class=ReviewRequest,
            aliases=("akgentic_review.old_messages.ReviewRequest",),
        )
    ]
