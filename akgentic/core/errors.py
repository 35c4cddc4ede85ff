"""Exceptions of the actor runtime."""

__all__ = ["WarningError"]


class WarningError(Exception):
    """Raise from a handler to report a handled, user-visible problem (not a failure).

    The actor reports it as a WarningMessage instead of an ErrorMessage.
    Import it from ``akgentic.core.agent``, where it has always lived.
    """
