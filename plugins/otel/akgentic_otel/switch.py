"""The switch of live export: which teams get an :class:`OtelSubscriber`, and which one.

A team gets one when its card's ``telemetry:`` block names an ``endpoint``, or else
when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is
set; ``enabled: false`` in the block turns it off for that team. The block's
``capture_content`` wins over ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``.
The block is validated by :class:`TelemetrySettings` when a team is created from the
card; a malformed one is refused with its location (``telemetry.endpoint: ...``).

Deciding costs no OpenTelemetry import: the SDK is imported only when a team does
export (a process without telemetry configured never loads it).

Teams exporting to the same endpoint with the same content setting share one
subscriber, so a process running many teams runs one export thread per endpoint,
not one per team (the subscriber keeps each team's spans apart by team id). The
shared subscribers send what they hold when the process exits (each bounded by its
export timeout) and on :func:`shutdown_live_exports`.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from uuid import UUID

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from akgentic.plugin_api import TeamCardError

if TYPE_CHECKING:
    from akgentic_otel.live import OtelSubscriber

__all__ = [
    "CONTENT_ENV_VAR",
    "TelemetrySettings",
    "env_capture_content",
    "env_endpoint",
    "live_subscriber",
    "shutdown_live_exports",
    "telemetry_settings",
]

#: The conventions' switch for prompt and completion content (``true`` to record it).
CONTENT_ENV_VAR = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def env_endpoint() -> str | None:
    """``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, else ``OTEL_EXPORTER_OTLP_ENDPOINT``, else None."""
    return next((os.environ[v] for v in _ENDPOINT_VARS if os.environ.get(v)), None)


def env_capture_content() -> bool:
    """Whether ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for content."""
    return os.environ.get(CONTENT_ENV_VAR, "").strip().lower() in ("1", "true", "yes")


class TelemetrySettings(BaseModel):
    """The ``telemetry:`` block of a team card."""

    model_config = ConfigDict(extra="forbid")

    #: False turns live export off for this team, even when the environment sets an endpoint.
    enabled: bool = True
    #: An OTLP/HTTP base URL (``http://collector:4318``) or traces URL; wins over the env.
    endpoint: str | None = None
    #: Record prompt and completion content; unset: the conventions' environment variable.
    capture_content: bool | None = None

    @field_validator("endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"an OTLP/HTTP URL such as http://collector:4318 is needed, not {value!r}"
            )
        if parts.username or parts.password:
            # The card is stored with the team (its record, its log): no secrets in it.
            raise ValueError(
                "credentials do not belong in the card, which is stored with the team; "
                "set OTEL_EXPORTER_OTLP_HEADERS instead"
            )
        return value


def _location(loc: tuple[int | str, ...]) -> str:
    text = "telemetry"
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def telemetry_settings(block: Mapping[str, Any] | None) -> TelemetrySettings | None:
    """Validate a card's ``telemetry`` block; ``TeamCardError`` names each bad key."""
    if block is None:
        return None
    try:
        return TelemetrySettings.model_validate(block)
    except ValidationError as exc:
        problems = "; ".join(
            f"{_location(error['loc'])}: {str(error['msg']).removeprefix('Value error, ')}"
            for error in exc.errors(include_url=False)
        )
        raise TeamCardError(f"invalid telemetry block: {problems}") from None


_lock = threading.Lock()
_shared: dict[tuple[str, bool], OtelSubscriber] = {}


def _subscriber(endpoint: str, capture_content: bool) -> OtelSubscriber:
    from akgentic_otel.live import OtelSubscriber

    with _lock:
        subscriber = _shared.get((endpoint, capture_content))
        if subscriber is None:
            if not _shared:
                atexit.register(shutdown_live_exports)
            subscriber = OtelSubscriber(endpoint, capture_content=capture_content)
            _shared[endpoint, capture_content] = subscriber
        return subscriber


def live_subscriber(team_card: Any, team_id: UUID) -> OtelSubscriber | None:
    """The subscriber exporting ``team_id``'s spans live, or None (see the module docstring).

    ``team_card`` is the team's ``TeamCard``; a malformed ``telemetry`` block raises
    ``TeamCardError`` whether or not export is on.
    """
    settings = telemetry_settings(getattr(team_card, "telemetry", None))
    if settings is not None and not settings.enabled:
        return None
    endpoint = (settings.endpoint if settings is not None else None) or env_endpoint()
    if endpoint is None:
        return None
    capture = settings.capture_content if settings is not None else None
    subscriber = _subscriber(endpoint, env_capture_content() if capture is None else capture)
    subscriber.name_team(team_id, getattr(team_card, "name", None) or "")
    return subscriber


def shutdown_live_exports() -> None:
    """Send what the shared subscribers hold and stop them (also run at process exit)."""
    with _lock:
        subscribers = list(_shared.values())
        _shared.clear()
    for subscriber in subscribers:
        subscriber.shutdown()
