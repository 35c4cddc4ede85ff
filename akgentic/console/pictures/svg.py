"""A small SVG writer: every text and attribute value is escaped, numbers are rounded.

Member names, tool names and anything else a team wrote are hostile input: they
go through :func:`escape`, which also replaces the characters XML 1.0 forbids
(control characters, lone surrogates), so the document stays well formed and a
name can only ever be text. Attribute *names* and tags are the builders' own
constants, never data.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

__all__ = ["SvgWriter", "clip", "escape", "fmt"]

# Characters XML 1.0 does not allow in a document (a DOMParser refuses the whole
# picture if one slips in), replaced by U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

AttrValue = str | int | float | None


# Anything ``escape`` would change: most labels and every constant need no work.
_SPECIAL = re.compile("[&<>\"'\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(value: object) -> str:
    """``value`` as XML-safe text, for an element's text or a quoted attribute value."""
    text = value if isinstance(value, str) else str(value)
    if _SPECIAL.search(text) is None:
        return text
    return html.escape(_NOT_XML.sub("\ufffd", text), quote=True)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (labels; titles keep it whole)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fmt(value: float) -> str:
    """A coordinate with at most one decimal (``12``, ``12.5``)."""
    text = f"{value:.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text


def _attrs(attrs: Mapping[str, AttrValue]) -> str:
    out = []
    for name, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, float):
            out.append(f' {name}="{fmt(value)}"')
        elif isinstance(value, int):
            out.append(f' {name}="{value}"')
        else:
            out.append(f' {name}="{escape(value)}"')
    return "".join(out)


class SvgWriter:
    """Builds one SVG document as a list of strings (fast for thousands of elements)."""

    def __init__(
        self, width: float, height: float, view_box: str, attrs: Mapping[str, AttrValue]
    ) -> None:
        head: dict[str, AttrValue] = {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": view_box,
            "width": fmt(width),
            "height": fmt(height),
            **attrs,
        }
        self.parts: list[str] = [f"<svg{_attrs(head)}>"]

    def add(self, tag: str, attrs: Mapping[str, AttrValue], text: str | None = None) -> None:
        """One element; ``text`` (escaped here) becomes its text content."""
        if text is None:
            self.parts.append(f"<{tag}{_attrs(attrs)}/>")
        else:
            self.parts.append(f"<{tag}{_attrs(attrs)}>{escape(text)}</{tag}>")

    def open(self, tag: str, attrs: Mapping[str, AttrValue]) -> None:
        """Start an element that holds others (close it with :meth:`close`)."""
        self.parts.append(f"<{tag}{_attrs(attrs)}>")

    def close(self, tag: str) -> None:
        """End the element :meth:`open` started."""
        self.parts.append(f"</{tag}>")

    def title(self, text: str) -> None:
        """A ``<title>`` child: the tooltip of the enclosing element."""
        self.parts.append(f"<title>{escape(text)}</title>")

    def render(self) -> str:
        """The finished document."""
        return "".join(self.parts) + "</svg>"
