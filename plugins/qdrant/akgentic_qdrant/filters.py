"""Payload filters of a query, built with a Qdrant library's typed condition classes.

Both ``qdrant_client.models`` and ``qdrant_edge`` offer ``Filter``, ``FieldCondition``,
``MatchValue``, ``MatchAny`` and ``MatchPrefix`` under the same names and fields, so
one builder serves both. Values are never interpolated into strings: each becomes
a typed match condition, compared literally by the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from akgentic.plugin_api import IMPOSSIBLE, Scalar, is_shared, typed_values

__all__ = ["IMPOSSIBLE", "PAYLOAD_KEYS", "build_filter"]

#: Payload keys written on every point; ``tenant``, ``scope``, ``path`` and
#: ``ordinal`` only when set (see :func:`akgentic.vector.backend_support.row_fields`).
PAYLOAD_KEYS = ("ref_type", "ref_id", "text", "team_id", "tenant", "scope", "path", "ordinal")


def build_filter(
    models: Any,
    collection: str,
    team_id: str | None,
    tenant: str | None,
    *,
    scope: str | None = None,
    path_prefix: str | None = None,
    filters: Mapping[str, list[Scalar]] | None = None,
    ref_ids: list[str] | None = None,
    team_override: str | None = None,
) -> Any:
    """A ``models.Filter`` ANDing the team, tenant and every predicate (or IMPOSSIBLE).

    ``team_override`` filters on that team instead of the backend's (the admin sweep).
    """
    must: list[Any] = []

    def equals(key: str, value: Any) -> None:
        must.append(models.FieldCondition(key=key, match=models.MatchValue(value=value)))

    team = team_override if team_override is not None else team_id
    if team_override is not None or not is_shared(collection):
        equals("team_id", team or "")
    if tenant is not None:
        equals("tenant", tenant)
    if scope is not None:
        equals("scope", scope)
    if path_prefix is not None:
        must.append(models.FieldCondition(key="path", match=models.MatchPrefix(prefix=path_prefix)))
    if ref_ids is not None:
        must.append(models.FieldCondition(key="ref_id", match=models.MatchAny(any=list(ref_ids))))
    for key, values in (filters or {}).items():
        typed = typed_values(key, values)
        if not typed:
            return IMPOSSIBLE
        if len(typed) == 1:
            equals(key, typed[0])
        else:
            must.append(models.FieldCondition(key=key, match=models.MatchAny(any=typed)))
    return models.Filter(must=must)
