"""The metadata template grammar: ``str.format`` syntax with bare field names only.

A template is written by an operator but rendered with values a team may hold from
anywhere, so the grammar allows no attribute access, indexing, conversion or format
spec: ``{fiscal_year}`` is a placeholder, ``{a.__class__}`` or ``{a!r}`` is refused.
Values are substituted once and never parsed again.
"""

from __future__ import annotations

import string

__all__ = ["TemplateError", "placeholders", "render"]

_FORMATTER = string.Formatter()


class TemplateError(ValueError):
    """A template outside the grammar; the message names the offending placeholder."""


def _shown(field: str, conversion: str | None, spec: str) -> str:
    text = field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
    return "{" + text + "}"


def placeholders(template: str) -> list[str]:
    """The placeholder names of ``template``, in order of first appearance.

    Raises:
        TemplateError: A placeholder that is not a bare identifier without a leading
            underscore (``{a.b}``, ``{a[0]}``, ``{0}``, ``{}``, ``{a!r}``, ``{a:>10}``,
            ``{_x}``, ``{ a }``), or unbalanced braces.
    """
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as error:
        raise TemplateError(f"the template's braces do not balance ({error})") from None
    names: list[str] = []
    for _literal, field, spec, conversion in parsed:
        if field is None:
            continue
        shown = _shown(field, conversion, spec or "")
        if conversion is not None or spec:
            raise TemplateError(
                f"placeholder {shown} is refused: conversions and format specs are not allowed"
            )
        if not field.isidentifier() or field.startswith("_"):
            raise TemplateError(
                f"placeholder {shown} is refused: use a bare field name (letters, digits "
                "and '_', not starting with '_'), without attributes or indices"
            )
        if field not in names:
            names.append(field)
    return names


def render(template: str, values: dict[str, str]) -> str:
    """``template`` with each placeholder replaced by ``values[name]`` (checked first)."""
    placeholders(template)
    return template.format_map(values)
