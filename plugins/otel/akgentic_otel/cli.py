"""``akgentic team trace ID``: a team's trace, made after the fact from its stored log.

The log is read once, mapped by :mod:`akgentic_otel.mapping` and then sent to an
OTLP/HTTP endpoint (``--otlp URL``, else ``$OTEL_EXPORTER_OTLP_ENDPOINT``), printed
as OTLP JSON (``--json``), or, with neither, printed as an indented tree. Works for
any stored team, running or stopped, including runs made before telemetry was set up.

Exit codes: 0 success; 1 an unknown team, a missing store, or an export that did
not reach the endpoint; 2 invalid input (a malformed id or store URL, both
``--otlp`` and ``--json``). Every error is one ``error:`` line on stderr.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn
from uuid import UUID

import typer

__all__ = ["TraceError", "load_trace", "trace_command"]


class TraceError(Exception):
    """What stops a trace command: the message is the error line, ``code`` the exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _fail(error: TraceError) -> NoReturn:
    # One line, whatever the driver said (PostgreSQL's hints come on lines of their own).
    typer.echo(f"error: {' '.join(str(error).split())}", err=True)
    raise typer.Exit(error.code)


def _file_store_path(url: str) -> Path | None:
    """The file or directory a ``sqlite:`` / ``yaml:`` URL names (SQLAlchemy convention)."""
    scheme, _sep, rest = url.partition("://")
    if scheme.lower() not in ("sqlite", "yaml") or not rest.startswith("/"):
        return None
    location = rest[1:].split("?", 1)[0]
    return Path(location) if location else None


def _open_store(url: str | None) -> Any:
    from akgentic.plugin_api import TeamError, open_event_store

    target = (url or os.environ.get("AKGENTIC_STORE") or "").strip() or (
        "sqlite:///.akgentic/akgentic.db"
    )
    if "://" not in target:
        raise TraceError(f"store URL {target!r} has no scheme (sqlite:///path, yaml:///dir)", 2)
    path = _file_store_path(target)
    if path is not None and not path.exists():
        # Opening would create an empty store: a typo must not look like "no such team".
        raise TraceError(f"no store at {path} ({target})")
    try:
        return open_event_store(target)
    except (TeamError, LookupError, ValueError, OSError) as exc:
        code = 2 if isinstance(exc, ValueError | LookupError) else 1
        raise TraceError(str(exc), code) from None


def load_trace(
    team_id: str, store: str | None, *, capture_content: bool = False
) -> tuple[UUID, str, list[Any]]:
    """The team's id, name and span records, read from its stored log."""
    from akgentic_otel.mapping import trace_log

    try:
        uid = UUID(team_id.strip())
    except ValueError:
        raise TraceError(f"{team_id!r} is not a team id (a UUID)", 2) from None
    event_store = _open_store(store)
    try:
        process = event_store.load_team(uid)
        if process is None:
            raise TraceError(f"no team {uid} in this store")
        events = event_store.load_events(uid)
    finally:
        event_store.close()
    name = str(getattr(process.team_card, "name", "") or "")
    records = trace_log(uid, events, team_name=name, capture_content=capture_content)
    return uid, name, records


def _print_tree(records: list[Any]) -> None:
    children: dict[int | None, list[Any]] = {}
    for record in records:
        children.setdefault(record.parent_id, []).append(record)

    def show(record: Any, depth: int) -> None:
        millis = (record.end_ns - record.start_ns) / 1e6
        extra = ""
        tokens_in = record.attributes.get("gen_ai.usage.input_tokens")
        if tokens_in is not None:
            tokens_out = record.attributes.get("gen_ai.usage.output_tokens")
            extra = f"  tokens {tokens_in} in / {tokens_out} out"
        if record.error is not None:
            extra += f"  error: {record.error}"
        typer.echo(f"{'  ' * depth}{record.name}  {millis:.1f} ms{extra}")
        for child in children.get(record.span_id, []):
            show(child, depth + 1)

    for root in children.get(None, []):
        typer.echo(f"trace {root.trace_id:032x}")
        show(root, 1)


def trace_command(
    team_id: Annotated[str, typer.Argument(help="Id of a stored team (running or stopped).")],
    otlp: Annotated[
        str | None,
        typer.Option(
            "--otlp",
            metavar="URL",
            help="Send the spans to this OTLP/HTTP endpoint "
            "(default: $OTEL_EXPORTER_OTLP_ENDPOINT).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the spans as OTLP JSON instead.")
    ] = False,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            envvar="AKGENTIC_STORE",
            help="Event store URL (default: sqlite:///.akgentic/akgentic.db).",
        ),
    ] = None,
    content: Annotated[
        bool,
        typer.Option(
            "--content", help="Include prompts, completions and tool arguments (off by default)."
        ),
    ] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds an OTLP export may take, retries included.")
    ] = 10.0,
) -> None:
    """Export the trace of a team's runs from its stored log: one trace per turn."""
    from akgentic_otel.export import ExportError, export_otlp, otlp_json, team_resource

    try:
        if otlp is not None and as_json:
            raise TraceError("--otlp and --json exclude each other", 2)
        if not timeout > 0:
            raise TraceError("--timeout must be a positive number of seconds", 2)
        uid, name, records = load_trace(team_id, store, capture_content=content)
        resource = team_resource(uid, name)
        if as_json:
            json.dump(otlp_json(records, resource), sys.stdout)
            sys.stdout.write("\n")
            return
        endpoint = otlp or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        if not endpoint:
            _print_tree(records)
            return
        try:
            sent = export_otlp(records, resource, endpoint, timeout=timeout)
        except ExportError as exc:
            raise TraceError(str(exc)) from None
        typer.echo(f"exported {sent} spans of team {uid}")
    except TraceError as exc:
        _fail(exc)
