"""A manager hires a role named in its output, delegates, and answers the human."""

from __future__ import annotations

from typing import Any

from akgentic.agent import Request, StructuredOutput


def out(*requests: tuple[str, str, str]) -> StructuredOutput:
    return StructuredOutput(
        messages=[Request(recipient=r, message_type=t, message=m) for r, t, m in requests]
    )


def test_a_role_named_as_recipient_is_hired_and_receives_the_raw_message(
    team: Any, book: Any, helpers: Any
) -> None:
    book.script("Developer", out(("@Manager", "response", "Parser written.")))
    book.script(
        "Manager",
        out(("Developer", "request", "Write the parser.")),
        out(("@Human", "response", "The parser is done.")),
    )
    team.card("Developer")
    manager = team.spawn(team.card("Manager", register=False))
    team.say(manager, "Plan the parser work.")
    helpers.wait_for(lambda: team.to_human())
    assert team.to_human() == ["The parser is done."]
    delegated = team.recorder.sent(by="@Manager")
    assert delegated[0].content == "Write the parser."
    assert delegated[0].type == "request"
