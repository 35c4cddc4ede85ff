"""Weaviate filters of a query, built from weaviate-client's own ``Filter`` objects.

Values are handed to the client's typed builders, never formatted into a query
string, so quotes, operators and long strings are compared literally. The only
pattern is the path prefix, sent as ``like("<prefix>*")``: wildcards inside the
prefix itself are refused earlier (``check_path_prefix``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from weaviate.classes.query import Filter

from akgentic.plugin_api import IMPOSSIBLE, Scalar, is_shared, typed_values

__all__ = ["IMPOSSIBLE", "build_filter", "class_name"]


def class_name(collection: str) -> str:
    """The Weaviate class of a collection: Weaviate capitalises the first letter."""
    return collection[:1].upper() + collection[1:]


def build_filter(
    collection: str,
    team_id: str | None,
    *,
    scope: str | None = None,
    path_prefix: str | None = None,
    filters: Mapping[str, list[Scalar]] | None = None,
    ref_ids: list[str] | None = None,
    team_override: str | None = None,
) -> Any:
    """The AND of the team predicate and every given one (None: no filter; or IMPOSSIBLE)."""
    parts: list[Any] = []
    if team_override is not None:
        parts.append(Filter.by_property("team_id").equal(team_override))
    elif not is_shared(collection):
        parts.append(Filter.by_property("team_id").equal(team_id or ""))
    if scope is not None:
        parts.append(Filter.by_property("scope").equal(scope))
    if path_prefix is not None:
        parts.append(Filter.by_property("path").like(f"{path_prefix}*"))
    if ref_ids is not None:
        parts.append(Filter.by_property("ref_id").contains_any(list(ref_ids)))
    for key, values in (filters or {}).items():
        typed = typed_values(key, values)
        if not typed:
            return IMPOSSIBLE
        prop = Filter.by_property(key)
        parts.append(prop.equal(typed[0]) if len(typed) == 1 else prop.contains_any(typed))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Filter.all_of(parts)
