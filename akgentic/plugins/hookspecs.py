"""The reference of every akgentic extension point.

Each function below is a pluggy hook specification of the ``akgentic`` project.
A plugin is a module (named by an entry point in the ``akgentic`` group) that
defines functions with the same names, decorated with
``from akgentic.plugins import hookimpl``. A plugin implements only the hooks it
needs, and may declare fewer parameters than the specification.

Registration hooks take no argument and return an iterable of typed records
(:mod:`akgentic.plugins.specs`). The registry calls every implementation, checks
each record (``Spec.check``: a ``ToolCardSpec`` whose ``card`` is not a
``ToolCard`` subclass, a factory that is not callable...), flattens the results
into one name -> record map per kind and raises
:class:`~akgentic.plugins.errors.DuplicatePluginNameError` when two plugins claim
the same name (both plugins then show the status ``conflict``). A hook that
raises or returns a record failing its check makes its plugin ``failed``; the
other plugins keep working. Hooks are called once per registry, when the kind is
first needed (never per actor message), so they should only *describe* things:
import heavy optional libraries inside the factories they return, not at module
top.

The docs' hook reference is generated from these docstrings, and a test fails
when a hook lacks one of its sections (Purpose, Parameters, Results, Example).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from uuid import UUID

from akgentic.plugins.markers import hookspec
from akgentic.plugins.specs import (
    AgentClassSpec,
    ConsolePaneSpec,
    EmbedderSpec,
    EventStoreSpec,
    MessageTypeSpec,
    RuntimeSpec,
    SandboxBackendSpec,
    ToolCardSpec,
    VectorBackendSpec,
    WebRoutesSpec,
)

if TYPE_CHECKING:
    import typer

    from akgentic.core.event_subscriber import EventSubscriber

__all__ = [
    "akgentic_agent_classes",
    "akgentic_cli",
    "akgentic_console_panes",
    "akgentic_embedders",
    "akgentic_event_stores",
    "akgentic_message_types",
    "akgentic_runtimes",
    "akgentic_sandbox_backends",
    "akgentic_team_fork",
    "akgentic_team_subscribers",
    "akgentic_tool_cards",
    "akgentic_vector_backends",
    "akgentic_web_routes",
]


@hookspec
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:  # type: ignore[empty-body]
    """Contribute tool cards.

    Purpose:
        Make ToolCard subclasses addressable by a registered name, so a team
        card can say ``- card: shout`` and a serialized card can be loaded back.

    Parameters:
        None.

    Results:
        Every implementation is called; the records are flattened into one
        map keyed by ``ToolCardSpec.name``. Two plugins returning the same name
        is an error naming both.

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_tool_cards():
                return [ToolCardSpec(name="shout", card=ShoutTool)]
    """


@hookspec
def akgentic_event_stores() -> Iterable[EventStoreSpec]:  # type: ignore[empty-body]
    """Contribute event stores, selected by the scheme of a store URL.

    Purpose:
        Let ``--store postgresql://...`` or ``AKGENTIC_STORE=yaml:///teams``
        open a store provided by any installed plugin.

    Parameters:
        None.

    Results:
        Every implementation is called; records are flattened into one map
        keyed by name, and each URL scheme maps to exactly one store (a scheme
        claimed twice is an error naming both plugins).

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_event_stores():
                return [EventStoreSpec(name="postgres", schemes=("postgresql", "postgres"),
                                       open=open_postgres_store, init=init_schema)]
    """


@hookspec
def akgentic_vector_backends() -> Iterable[VectorBackendSpec]:  # type: ignore[empty-body]
    """Contribute vector backends.

    Purpose:
        Provide the storage behind vector-store params (``backend: qdrant``).
        ``factory(context)`` receives an ``akgentic.vector.BackendContext`` (the
        param, the owning team, a root) and imports its client library itself.
        ``is_configured``/``default_priority`` pick the default backend;
        ``require_configured(owner)`` refuses a named backend the environment does
        not provision; ``persists_in_actor_state`` puts the rows in the team's
        ``#VectorStore`` actor. Each backend runs ``VectorBackendContract``.

    Parameters:
        None.

    Results:
        Every implementation is called; records are flattened into one map keyed
        by name; a duplicate name is an error naming both plugins.

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_vector_backends():
                return [VectorBackendSpec(name="qdrant", factory=make_qdrant_backend,
                                          default_priority=10, is_configured=url_is_set,
                                          require_configured=require_url,
                                          distribution="akgentic-qdrant")]
    """


@hookspec
def akgentic_sandbox_backends() -> Iterable[SandboxBackendSpec]:  # type: ignore[empty-body]
    """Contribute sandbox backends that run commands for tools.

    Purpose:
        Provide isolated command execution (bubblewrap, Docker, ...).

    Parameters:
        None.

    Results:
        Every implementation is called; records are flattened into one map keyed
        by name; a duplicate name is an error naming both plugins.

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_sandbox_backends():
                return [SandboxBackendSpec(name="bwrap", factory=BwrapBackend,
                                           available=bwrap_on_path)]
    """


@hookspec
def akgentic_embedders() -> Iterable[EmbedderSpec]:  # type: ignore[empty-body]
    """Contribute embedding providers for vector search.

    Purpose:
        Turn text into vectors for the vector backends (a store param's
        ``embedding_provider``). ``factory(model, dimension, timeout_s)`` builds an
        ``akgentic.vector.Embedder``; ``models`` maps known models to their width
        (checked when a team is built); ``available()`` returns None or the reason
        the embedder cannot run here (a missing key), and never raises. Each
        embedder runs ``EmbedderContract``.

    Parameters:
        None.

    Results:
        Every implementation is called; records are flattened into one map keyed
        by name; a duplicate name is an error naming both plugins.

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_embedders():
                return [EmbedderSpec(name="hashing", factory=HashingEmbedder, dimensions=256,
                                     max_batch=1024, distribution="akgentic-embed-local")]
    """


@hookspec
def akgentic_agent_classes() -> Iterable[AgentClassSpec]:  # type: ignore[empty-body]
    """Contribute agent classes that team cards can name.

    Purpose:
        Let a YAML team card say ``agent_class: reviewer`` instead of a dotted
        import path, and list the agent kinds a installation offers.

    Parameters:
        None.

    Results:
        Every implementation is called; records are flattened into one map keyed
        by name; a duplicate name is an error naming both plugins.

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_agent_classes():
                return [AgentClassSpec(name="reviewer", agent_class=ReviewerAgent)]
    """


@hookspec
def akgentic_message_types() -> Iterable[MessageTypeSpec]:  # type: ignore[empty-body]
    """Contribute message and event classes that may appear in stored logs.

    Purpose:
        Declare the persisted types a plugin writes, with the former dotted
        paths (``aliases``) of classes that moved, so old logs keep loading.

    Parameters:
        None.

    Results:
        Every implementation is called; records are flattened into one map keyed
        by name; a duplicate name is an error naming both plugins.

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_message_types():
                return [MessageTypeSpec(name="akgentic_x.events.Pinged",
                                        message_class=Pinged,
                                        aliases=("akgentic_x.old.Pinged",))]
    """


@hookspec
def akgentic_console_panes() -> Iterable[ConsolePaneSpec]:  # type: ignore[empty-body]
    """Contribute panes to the web console's team page (``akgentic serve``).

    Purpose:
        Show what a tool card holds (a skill menu, pending notifications, a
        plan...) next to the conversation. A card with no pane is shown as
        the text of its latest context state.

    Parameters:
        None.

    Results:
        Every implementation is called; records are flattened into one map
        keyed by name; a duplicate name is an error naming both plugins. The
        console calls ``render`` on each request for the pane; a render that
        raises shows its error in the pane, and the rest of the page works.
        Blocks are ``text``, ``list``, ``table``, ``graph`` (drawn, searchable)
        and ``tree`` (items that open); a record with ``open(source, key)``
        answers for an openable tree item (a file) and refuses, with
        ``ValueError`` or ``LookupError``, a key it must not show. Every value
        is rendered as text, never markup. A record with ``state(source)``
        also gives its content as JSON data, which protocol adapters share
        (AG-UI's state carries it under the pane's name).

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_console_panes():
                return [ConsolePaneSpec(name="shout-log", card="shout", title="Shouts",
                                        render=lambda source: [{"kind": "text",
                                                                "text": "no shouts yet"}])]
    """


@hookspec
def akgentic_runtimes() -> Iterable[RuntimeSpec]:  # type: ignore[empty-body]
    """Contribute runtimes: where teams run, selected by the scheme of a cluster URL.

    Purpose:
        Let ``--cluster nats://...`` or ``AKGENTIC_CLUSTER=nats://...`` place
        teams on a fleet of workers provided by any installed plugin, behind
        the one client API of :mod:`akgentic.cluster` (``connect(url)``). The
        built-in ``local`` runtime runs teams in the calling process. Each
        runtime runs ``akgentic.testing.RuntimeContract``.

    Parameters:
        None.

    Results:
        Every implementation is called; records are flattened into one map
        keyed by name, and each URL scheme maps to exactly one runtime (a
        scheme claimed twice is an error naming both plugins).

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_runtimes():
                return [RuntimeSpec(name="nats", schemes=("nats",),
                                    connect=connect_nats, init=init_nats)]
    """


@hookspec
def akgentic_web_routes() -> Iterable[WebRoutesSpec]:  # type: ignore[empty-body]
    """Serve more routes from ``akgentic serve``, next to the console.

    Purpose:
        Let a plugin make the server's teams reachable over another protocol
        (A2A, AG-UI...) without a server of its own: its routes share the
        console's process, teams, port and access rules. Each implementation
        runs ``akgentic.testing.WebRoutesContract``.

    Parameters:
        None.

    Results:
        Every implementation is called; records are flattened into one map keyed
        by name, and each prefix belongs to one record (a prefix claimed twice is
        an error naming both plugins). When the server starts it calls each
        record's ``build(service)`` once and mounts the ASGI application it
        returns at the record's ``prefix``, behind the console's token, Host and
        Origin checks. A ``build`` that raises is reported on one line and its
        routes answer 503; the console and the other routes work.

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_web_routes():
                return [WebRoutesSpec(name="a2a", prefix="/a2a", build=build_a2a_app)]
    """


@hookspec
def akgentic_cli(app: typer.Typer, groups: Mapping[str, typer.Typer]) -> None:
    """Add commands to the ``akgentic`` command line.

    Purpose:
        Give a plugin its own sub-commands (``akgentic hello``, ``akgentic
        store init``...), or a sub-command of a built-in group (``akgentic
        team trace ID``).

    Parameters:
        app: the root Typer application; add commands or sub-applications to it.
        groups: the kernel's built-in command groups by name (``team``,
            ``store``, ``cards``, ``sandbox``, ``cluster``, ``vector``); add a
            command to one of them (``groups["team"].command("trace")``) to
            extend it. Reaching them through ``app.registered_groups`` instead
            would bypass the clash check below. An implementation that does not
            need them leaves the parameter out.

    Results:
        Every implementation is called once when the CLI starts, in plugin
        load order; return values are ignored. A plugin whose hook raises is
        reported as failed and the CLI keeps working without its commands. A
        command named like one that already exists (a built-in such as
        ``team``, or an earlier plugin's) is dropped and reported: a warning,
        and the status ``conflict`` in ``akgentic plugins``. The same holds
        inside a built-in group: a plugin's ``team create`` is dropped, the
        kernel's stays. ``akgentic plugins`` lists a group's command with its
        group (``"team trace"``).

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_cli(app, groups):
                @app.command()
                def hello(name: str = "world") -> None:
                    print(f"hello {name}")

                @groups["team"].command("shout")
                def shout(team_id: str) -> None:
                    print(f"HELLO TEAM {team_id}")
    """


@hookspec
def akgentic_team_subscribers(  # type: ignore[empty-body]
    team_card: Any, team_id: UUID
) -> Iterable[EventSubscriber]:
    """Attach event subscribers to every team a manager runs.

    Purpose:
        Let a plugin watch each team while it runs (export its events as
        telemetry, mirror them somewhere) without the code that builds the
        ``TeamManager`` knowing about it. A ``TeamManager`` calls the hook once
        per team run: when it creates the team and when it resumes (or adopts)
        it, never per message. The subscribers returned are attached after the
        manager's own, see the team's messages like them (history replayed on a
        resume is announced by ``set_restoring``), and are released by the
        ``on_stop(team_id)`` the orchestrator calls on every subscriber when the
        team stops: drop per-team state there. They run on the team's threads,
        so they must never block (a slow exporter queues and drops instead).

    Parameters:
        team_card: the ``akgentic.team.TeamCard`` of the team (typed ``Any``
            here because the hook specifications sit below the team layer). A
            plugin reads its own block of the card there (``team_card.telemetry``).
        team_id: the team's id.

    Results:
        Every implementation is called; the subscribers returned are flattened
        into one list, in plugin load order (``None`` or an empty list: none).
        A plugin whose hook raises, or returns something that is not a
        subscriber, is logged on one line and marked ``failed`` (as when any
        hook fails); the team runs without its subscribers. The one exception
        is a refusal of the card: an implementation that raises
        ``TeamCardError`` (from ``akgentic.plugin_api``) for a malformed block
        of its own makes ``create_team`` fail with that error before the team
        runs, and nothing of it is stored; on a resume the refusal is logged
        and the team resumes without that plugin's subscribers.

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_team_subscribers(team_card, team_id):
                if os.environ.get("SHOUT_EVENTS"):
                    return [ShoutingSubscriber(team_card.name)]
                return []
    """


@hookspec
def akgentic_team_fork(fork: Any) -> Any:
    """Carry a plugin's durable state of a team into a fork of the team, or refuse the fork.

    Purpose:
        A fork (``akgentic team fork``, ``TeamManager.fork_team``) copies a
        team's event log up to a sequence; state a card keeps outside the log
        (a workspace tree, rows in a database of its own) is the card's to
        copy as it was at that point. A card that cannot restore its state at
        that point declares it, and the fork is refused with a message naming
        the card, rather than made wrong. A card whose state the log holds
        (its tool actor replays its own state events) needs no implementation.

    Parameters:
        fork: an ``akgentic.team.fork.ForkRequest`` (typed ``Any`` here
            because the hook specifications sit below the team layer): the
            parent's record (``fork.parent``), the fork's id (``fork.child_id``),
            the fork point (``fork.at_sequence``, ``fork.at_time``), and
            searches of the parent's events up to it by their stored text
            (``fork.mentions(text)``, ``fork.events_mentioning(text)``), with
            ``fork.new_id(old)`` for the fork's ids.

    Results:
        Every implementation is called, before anything is written. Each
        returns ``None`` (the team holds nothing of this plugin outside its
        log), one ``akgentic.team.fork.ForkStep`` or a list of them. A step
        stages its copy in ``prepare()``, makes it the fork's in ``publish()``
        (just before the fork's record is written, the step that makes the
        fork exist) and removes it in ``discard()`` when the fork fails. An
        implementation refuses the fork by raising ``ForkRefusedError`` (from
        ``akgentic.plugin_api``) naming its card; any other exception refuses
        it too, naming the plugin. Nothing of the fork is then created.

    Example:
        .. code-block:: python

            @hookimpl
            def akgentic_team_fork(fork):
                if fork.mentions("akgentic_reminders."):
                    raise ForkRefusedError("reminders", "keeps its queue outside the log")
                return None
    """
