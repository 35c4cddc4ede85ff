"""``akgentic team usage ID [--json]``: what a team's models cost, from its stored log.

Per member (tokens, requests, tool calls, estimated USD; a remote member's calls
count as requests), per model and per run, with the team budget when the card has
one (limits, what is spent, and whether the team waits for a human). Read from the
log only: it works for a running, stopped or crashed team alike, and changes nothing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from akgentic.cli.session import PathOption, StoreOption, cli_errors
from akgentic.cli.tables import print_table

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message
    from akgentic.team.card import TeamCard

__all__ = ["add_usage_command", "team_usage"]


def _member_row(name: str) -> dict[str, Any]:
    return {
        "member": name,
        "requests": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "tool_calls": 0,
        "cost_usd": 0.0,
        "remote_calls": 0,
        "seconds": 0.0,
    }


def team_usage(messages: list[Message], card: TeamCard | None) -> dict[str, Any]:
    """The usage report of a team's log (what ``--json`` prints)."""
    from akgentic.core.messages.orchestrator import EventMessage
    from akgentic.llm.budget_events import BudgetCharged
    from akgentic.llm.events import LlmUsageEvent, ToolCallEvent
    from akgentic.llm.pricing import aggregate_usage
    from akgentic.llm.team_budget import TeamBudget

    members: dict[str, dict[str, Any]] = {}
    usage: list[LlmUsageEvent] = []
    run_member: dict[str, str] = {}
    for message in messages:
        if not isinstance(message, EventMessage):
            continue
        event = message.event
        name = message.sender.name if message.sender is not None else "?"
        if isinstance(event, LlmUsageEvent):
            usage.append(event)
            run_member.setdefault(event.run_id, name)
            row = members.setdefault(name, _member_row(name))
            row["requests"] += event.requests
            row["input_tokens"] += event.input_tokens
            row["output_tokens"] += event.output_tokens
            row["cost_usd"] += event.estimated_cost_usd
        elif isinstance(event, ToolCallEvent) and not event.tool_name.startswith("final_result"):
            members.setdefault(name, _member_row(name))["tool_calls"] += 1
        elif isinstance(event, BudgetCharged):
            row = members.setdefault(name, _member_row(name))
            row["seconds"] += event.seconds
            if not event.model:  # a remote member's call: no LlmUsageEvent of its own
                row["remote_calls"] += event.requests
                row["requests"] += event.requests
                row["input_tokens"] += event.input_tokens
                row["output_tokens"] += event.output_tokens
                row["cost_usd"] += event.usd
    summary = aggregate_usage(usage, by_run=True)
    models = [
        {
            "model": key,
            "requests": m.requests,
            "input_tokens": m.input_tokens,
            "output_tokens": m.output_tokens,
            "cost_usd": m.cost_usd,
        }
        for key, m in summary.by_model.items()
    ]
    runs = [
        {
            "run_id": r.run_id,
            "member": run_member.get(r.run_id, "?"),
            "requests": r.requests,
            "input_tokens": r.input_tokens,
            "output_tokens": r.output_tokens,
            "cost_usd": r.cost_usd,
            "models": list(r.models),
        }
        for r in summary.runs
    ]
    rows = list(members.values())
    totals = {
        key: sum(row[key] for row in rows)
        for key in ("requests", "input_tokens", "output_tokens", "tool_calls", "cost_usd")
    }
    budget = None
    if card is not None and card.budget is not None:
        budget = TeamBudget.rebuild(card.budget, messages, lead=card.lead_name).status()
        budget.pop("members", None)  # the members table says it, with more
    return {"members": rows, "models": models, "runs": runs, "totals": totals, "budget": budget}


def _print(report: dict[str, Any], team_id: str) -> None:
    console = Console(highlight=False)
    console.print(f"[bold]usage of team[/bold] {team_id}")
    members = Table(title="per member")
    columns = ("member", "requests", "input_tokens", "output_tokens", "tool_calls", "cost_usd")
    for column in columns:
        members.add_column(column)
    for row in report["members"]:
        members.add_row(*(_cell(row[c]) for c in columns))
    members.add_row("total", *(_cell(report["totals"][c]) for c in columns[1:]))
    print_table(members)
    models = Table(title="per model")
    for column in ("model", "requests", "input_tokens", "output_tokens", "cost_usd"):
        models.add_column(column)
    for row in report["models"]:
        models.add_row(*(_cell(v) for v in row.values()))
    print_table(models)
    runs = Table(title="per run")
    for column in ("run_id", "member", "requests", "input_tokens", "output_tokens", "cost_usd"):
        runs.add_column(column, no_wrap=column == "run_id")
    for row in report["runs"]:
        runs.add_row(
            *(
                _cell(row[c])
                for c in ("run_id", "member", "requests", "input_tokens", "output_tokens")
            ),
            _cell(row["cost_usd"]),
        )
    print_table(runs)
    budget = report["budget"]
    if budget is None:
        console.print("budget: none (the card has no budget: block)")
        return
    table = Table(title="team budget")
    for column in ("limit", "spent", "cap"):
        table.add_column(column)
    for name, cap in budget["limits"].items():
        table.add_row(name, _cell(budget["spent"][name]), "-" if cap is None else _cell(cap))
    print_table(table)
    state = budget["blocked"]
    console.print(f"budget state: {'open' if state is None else state}")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".") or "0"
    return str(value)


def add_usage_command(app: typer.Typer) -> None:
    """Add ``usage`` to the ``team`` command group."""

    @app.command("usage")
    def usage(
        team_id: Annotated[str, typer.Argument(help="Team id.")],
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        store: StoreOption = None,
        path: PathOption = None,
    ) -> None:
        """Print a team's model usage per member, per model and per run, and its budget."""
        from uuid import UUID

        from akgentic.cli.session import fail, import_roots, open_store
        from akgentic.team.errors import TeamNotFoundError

        with cli_errors():
            import_roots(None, path)
            try:
                uid = UUID(team_id)
            except ValueError:
                fail(f"{team_id!r} is not a team id (a UUID)", 2)
            event_store = open_store(store, must_exist=True)
            try:
                process = event_store.load_team(uid)
                if process is None:
                    raise TeamNotFoundError(uid)
                log = [stored.event for stored in event_store.load_events(uid)]
            finally:
                event_store.close()
            report = team_usage(log, process.team_card)
            if as_json:
                typer.echo(json.dumps({"team_id": str(uid), **report}, indent=2))
            else:
                _print(report, str(uid))
