"""Exceptions of the actor runtime."""

__all__ = ["RetriableError", "WarningError"]


class WarningError(Exception):
    """Raise from a handler to report a handled, user-visible problem (not a failure).

    The actor reports it as a WarningMessage instead of an ErrorMessage.
    Import it from ``akgentic.core.agent``, where it has always lived.
    """


class RetriableError(Exception):
    """A tool failed in a way the model can fix by calling it again differently.

    Raise it from a tool body with a message written for the model (what was wrong
    and what would work). The tool factory turns it into the LLM library's retry
    signal, so the message reaches the model instead of aborting the run.
    """
