"""The tables of the PostgreSQL event store, their creation and the check made on open.

Three tables hold the data; a fourth records which schema version was created:

``akgentic_teams``
    One row per team. ``payload`` (JSONB) is the record itself and the only
    source of truth; ``user_id``, ``status``, ``created_at``, ``updated_at``
    and ``metadata_indexes`` (``text[]``) are copies kept to find rows.
    Indexes: ``akgentic_teams_user_status_idx`` (user_id, status),
    ``akgentic_teams_created_idx`` (created_at, team_id) and the GIN index
    ``akgentic_teams_metadata_idx`` over ``metadata_indexes``.
``akgentic_events``
    The append-only logs; the primary key ``akgentic_events_pkey`` on
    ``(team_id, sequence)`` is what refuses a second write of a sequence.
``akgentic_agent_states``
    The latest snapshot per ``(team_id, agent_id)``.
``akgentic_schema_version``
    One row per component; the store refuses to open without it.

Creation is idempotent and serialised by an advisory lock, so several init
containers may run it at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import Connection, sql

__all__ = ["SCHEMA_VERSION", "Tables", "create_schema", "installed_version"]

SCHEMA_VERSION = 1
_COMPONENT = "event_store"
# Any fixed 64-bit key: serialises concurrent initialisations of one database.
_INIT_LOCK_KEY = 0x616B67656E746963


@dataclass(frozen=True)
class Tables:
    """The (optionally schema-qualified) table names, quoted, ready to paste into SQL."""

    schema: str | None
    teams: str
    events: str
    agent_states: str
    version: str

    @classmethod
    def in_schema(cls, schema: str | None) -> Tables:
        """Names for tables in ``schema`` (``None``: the connection's ``search_path``)."""

        def name(table: str) -> str:
            ident = sql.Identifier(schema, table) if schema else sql.Identifier(table)
            return ident.as_string(None)

        return cls(
            schema=schema,
            teams=name("akgentic_teams"),
            events=name("akgentic_events"),
            agent_states=name("akgentic_agent_states"),
            version=name("akgentic_schema_version"),
        )

    def sql(self, template: str) -> str:
        """``template`` with ``{teams}``, ``{events}``, ``{agent_states}``, ``{version}`` filled."""
        return template.format(
            teams=self.teams,
            events=self.events,
            agent_states=self.agent_states,
            version=self.version,
        )


_DDL = (
    """CREATE TABLE IF NOT EXISTS {teams} (
        team_id          uuid PRIMARY KEY,
        user_id          text NOT NULL,
        status           text NOT NULL,
        created_at       timestamptz NOT NULL,
        updated_at       timestamptz NOT NULL,
        metadata_indexes text[] NOT NULL DEFAULT '{{}}',
        payload          jsonb NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS akgentic_teams_user_status_idx ON {teams} (user_id, status)",
    "CREATE INDEX IF NOT EXISTS akgentic_teams_created_idx ON {teams} (created_at, team_id)",
    "CREATE INDEX IF NOT EXISTS akgentic_teams_metadata_idx ON {teams} "
    "USING GIN (metadata_indexes)",
    """CREATE TABLE IF NOT EXISTS {events} (
        team_id     uuid NOT NULL,
        sequence    bigint NOT NULL CHECK (sequence >= 1),
        event_type  text NOT NULL,
        timestamp   timestamptz NOT NULL,
        payload     jsonb NOT NULL,
        CONSTRAINT akgentic_events_pkey PRIMARY KEY (team_id, sequence)
    )""",
    """CREATE TABLE IF NOT EXISTS {agent_states} (
        team_id     uuid NOT NULL,
        agent_id    text NOT NULL,
        name        text,
        updated_at  timestamptz NOT NULL,
        payload     jsonb NOT NULL,
        CONSTRAINT akgentic_agent_states_pkey PRIMARY KEY (team_id, agent_id)
    )""",
    """CREATE TABLE IF NOT EXISTS {version} (
        component   text PRIMARY KEY,
        version     integer NOT NULL
    )""",
)


def create_schema(conn: Connection[Any], tables: Tables) -> None:
    """Create whatever is missing, in one transaction (``conn`` is an autocommit connection)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_INIT_LOCK_KEY,))
        if tables.schema:
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(tables.schema))
            )
        for statement in _DDL:
            conn.execute(tables.sql(statement))
        conn.execute(
            tables.sql(
                "INSERT INTO {version} (component, version) VALUES (%s, %s) "
                "ON CONFLICT (component) DO UPDATE SET version = "
                "GREATEST({version}.version, excluded.version)"
            ),
            (_COMPONENT, SCHEMA_VERSION),
        )


def installed_version(conn: Connection[Any], tables: Tables) -> int | None:
    """The schema version recorded in the database, ``None`` when it was never initialised."""
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (tables.version,)).fetchone()
    if row is None or not row[0]:
        return None
    found = conn.execute(
        tables.sql("SELECT version FROM {version} WHERE component = %s"), (_COMPONENT,)
    ).fetchone()
    return None if found is None else int(found[0])
