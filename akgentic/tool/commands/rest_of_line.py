"""The ``RestOfLine`` annotation: a parameter that takes the raw tail of a command line."""

from __future__ import annotations

from typing import Annotated, Final

__all__ = ["REST_OF_LINE", "RestOfLine", "RestOfLineMarker"]


class RestOfLineMarker:
    """Metadata object placed inside ``Annotated`` to flag a rest-of-line parameter.

    There is exactly one instance, :data:`REST_OF_LINE`; the registry looks for it
    by identity in a parameter's ``Annotated`` metadata.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "REST_OF_LINE"


REST_OF_LINE: Final = RestOfLineMarker()

RestOfLine = Annotated[str, REST_OF_LINE]
"""Type for the last parameter of a command that wants free text.

``def note(self, text: RestOfLine) -> str`` receives everything after the command
name verbatim (only the surrounding whitespace is removed): quotes, ``=`` signs and
repeated spaces are kept as typed. Only the last parameter may use it.
"""
