"""What an agent's model returns each turn, and the reply guidance keyed on intent."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal, TypeAlias

from pydantic import BaseModel, Field

from akgentic.llm.output import MergeableOutput

__all__ = ["REPLY_PROTOCOLS", "Intent", "Request", "StructuredOutput"]

Intent: TypeAlias = Literal["request", "response", "notification", "instruction", "acknowledgment"]
"""What the sender expects of the recipient."""

REPLY_PROTOCOLS: Final[dict[str, str]] = {
    "request": "{sender} is waiting for the outcome: once the work is done, send it back to "
    "{sender}.",
    "response": "It answers something you asked for earlier; use it and go on with your work.",
    "instruction": "Do what it says; confirm to {sender} only if you are asked to.",
    "notification": "It is for your information only; nobody expects an answer.",
    "acknowledgment": "It confirms that something was received; nothing more is needed.",
}
"""One line of guidance per incoming intent, prepended to the message the model reads.

``{sender}`` is replaced by the sender's name. The guidance states how the exchange
works, never how the team should divide its work.
"""


class Request(BaseModel):
    """One outgoing message the model wants delivered."""

    message_type: Intent = Field(
        description=(
            "What you expect of the recipient: 'request' (do it and send me the result), "
            "'instruction' (do it, possibly for someone else), 'response' (the answer to "
            "something you were asked), 'notification' (for information, no reply), "
            "'acknowledgment' (confirming receipt, no reply)."
        )
    )
    message: str = Field(description="The full text the recipient will read.")
    recipient: str = Field(
        description=(
            "'@Name' of an existing team member, or the name of a hireable role to hire a "
            "new member of that role and send it this message."
        )
    )


class StructuredOutput(MergeableOutput):
    """Everything the agent sends at the end of its turn; an empty list sends nothing."""

    messages: list[Request] = Field(
        default_factory=list,
        description="Messages to deliver, in order. Leave empty when no one needs to hear back.",
    )

    @classmethod
    def merge(cls, outputs: Iterable[StructuredOutput]) -> StructuredOutput:
        """One output holding every distinct request of ``outputs``, first occurrence kept."""
        seen: set[tuple[str, str, str]] = set()
        merged: list[Request] = []
        for output in outputs:
            for request in output.messages:
                key = (request.message_type, request.message, request.recipient)
                if key not in seen:
                    seen.add(key)
                    merged.append(request)
        return cls(messages=merged)
