"""The typed facade over the plugin hooks: one method per hook.

Nothing else in the code base calls ``pm.hook``; everything asks the registry
for a name -> record map of one kind. Each hook is called once per plugin
(through pluggy's public ``subset_hook_caller``) so every record is attributed
to the plugin that returned it: that is what lets a duplicate name be reported
with both culprits (both plugins get the status ``conflict``), and a plugin whose
hook raises, or returns a record that fails its check, be reported and skipped
without hiding the others.

A registry is an ordinary object: the team layer and the tool catalog take one
as a parameter, defaulting to :func:`current_registry` — the registry installed
for the calling code with :func:`use_registry`, else the process-wide one.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from akgentic.core.lookup import current_resolver, kind_base, use_resolver
from akgentic.plugins.errors import DuplicatePluginNameError, UnknownPluginNameError
from akgentic.plugins.known import provider_hint
from akgentic.plugins.specs import (
    KINDS,
    AgentClassSpec,
    ConsolePaneSpec,
    EmbedderSpec,
    EventStoreSpec,
    MessageTypeSpec,
    RuntimeSpec,
    SandboxBackendSpec,
    Spec,
    ToolCardSpec,
    VectorBackendSpec,
    WebRoutesSpec,
)

if TYPE_CHECKING:
    from uuid import UUID

    import typer

    from akgentic.core.event_subscriber import EventSubscriber
    from akgentic.plugins.host import PluginHost, PluginInfo

__all__ = ["PluginRegistry", "current_registry", "use_registry"]

logger = logging.getLogger(__name__)

#: The hooks an event subscriber may implement (``EventSubscriber``, plus the batch hook).
_SUBSCRIBER_HOOKS = ("on_message", "on_messages", "set_restoring", "on_stop_request", "on_stop")

S = TypeVar("S", bound=Spec)


def current_registry() -> PluginRegistry:
    """The registry installed by the innermost :func:`use_registry`, else the process one.

    The lookup is per thread (the context variable of :mod:`akgentic.core.lookup`): a
    team manager running with its own registry does not change what another thread sees.
    """
    resolver = current_resolver()
    if isinstance(resolver, PluginRegistry):
        return resolver
    from akgentic.plugins.host import get_host

    return get_host().registry


@contextlib.contextmanager
def use_registry(registry: PluginRegistry | None) -> Iterator[PluginRegistry]:
    """Make ``registry`` the :func:`current_registry` of this thread inside the block.

    ``None`` keeps whatever is current (so callers can pass an optional parameter
    straight through).
    """
    if registry is None:
        yield current_registry()
        return
    with use_resolver(registry):
        yield registry


class PluginRegistry:
    """Per-kind maps of everything the loaded plugins contribute.

    It is the kernel's :class:`~akgentic.core.lookup.NameResolver`.
    """

    def __init__(self, host: PluginHost) -> None:
        self._host = host
        self._lock = threading.RLock()
        self._maps: dict[str, dict[str, Spec]] = {}
        self._owners: dict[str, dict[str, PluginInfo]] = {}
        # A kind whose names clash stays an error until the plugins change.
        self._errors: dict[str, DuplicatePluginNameError] = {}
        # Kinds being collected: a hook that looks its own kind up gets no records.
        self._building: set[str] = set()

    @property
    def host(self) -> PluginHost:
        """The plugin host whose hooks this registry reads."""
        return self._host

    def invalidate(self) -> None:
        """Forget every collected map (the host calls it when its plugins change)."""
        with self._lock:
            self._maps.clear()
            self._owners.clear()
            self._errors.clear()

    # -- one method per hook ----------------------------------------------
    def tool_cards(self) -> Mapping[str, ToolCardSpec]:
        """Registered tool cards by name (hook ``akgentic_tool_cards``)."""
        return self._kind("tool_cards", ToolCardSpec)

    def event_stores(self) -> Mapping[str, EventStoreSpec]:
        """Registered event stores by name (hook ``akgentic_event_stores``)."""
        stores = self._kind("event_stores", EventStoreSpec)
        self._check_schemes(stores)
        return stores

    def vector_backends(self) -> Mapping[str, VectorBackendSpec]:
        """Registered vector backends by name (hook ``akgentic_vector_backends``)."""
        return self._kind("vector_backends", VectorBackendSpec)

    def sandbox_backends(self) -> Mapping[str, SandboxBackendSpec]:
        """Registered sandbox backends by name (hook ``akgentic_sandbox_backends``)."""
        return self._kind("sandbox_backends", SandboxBackendSpec)

    def embedders(self) -> Mapping[str, EmbedderSpec]:
        """Registered embedders by name (hook ``akgentic_embedders``)."""
        return self._kind("embedders", EmbedderSpec)

    def agent_classes(self) -> Mapping[str, AgentClassSpec]:
        """Registered agent classes by name (hook ``akgentic_agent_classes``)."""
        return self._kind("agent_classes", AgentClassSpec)

    def message_types(self) -> Mapping[str, MessageTypeSpec]:
        """Registered persisted message types by name (hook ``akgentic_message_types``)."""
        return self._kind("message_types", MessageTypeSpec)

    def console_panes(self) -> Mapping[str, ConsolePaneSpec]:
        """Registered web-console panes by name (hook ``akgentic_console_panes``)."""
        return self._kind("console_panes", ConsolePaneSpec)

    def runtimes(self) -> Mapping[str, RuntimeSpec]:
        """Registered runtimes by name (hook ``akgentic_runtimes``)."""
        runtimes = self._kind("runtimes", RuntimeSpec)
        self._check_schemes(runtimes, "runtimes")
        return runtimes

    def runtime_for_scheme(self, scheme: str) -> RuntimeSpec:
        """The runtime answering to a cluster URL scheme (``local``, ``nats``...)."""
        for spec in self.runtimes().values():
            if scheme in spec.schemes:
                return spec
        schemes = sorted(s for spec in self.runtimes().values() for s in spec.schemes)
        raise UnknownPluginNameError(
            "cluster URL scheme", scheme, schemes, provider_hint("runtimes", scheme)
        )

    def extend_cli(self, app: typer.Typer) -> dict[str, list[str]]:
        """Let every plugin add commands to ``app`` (hook ``akgentic_cli``).

        Returns the command names each plugin added (``"team trace"`` for one added
        to a built-in group). A plugin whose hook raises is marked failed and the
        others still run. A command or group a plugin adds under a name already
        taken (a built-in command, an earlier plugin's, a command of the built-in
        group it extends) is removed again and recorded as a conflict of that
        plugin, with a warning.
        """
        added: dict[str, list[str]] = {}
        groups = _builtin_groups(app)
        owners = {name: "" for name in _command_names(app)}  # "" marks a built-in command
        for group, sub in groups.items():
            owners.update({f"{group} {name}": "" for name in _command_names(sub)})
        targets: list[tuple[str, typer.Typer]] = [("", app), *groups.items()]
        for info, _plugin in self._host.loaded_plugins():
            caller = self._caller_for(info.name, "akgentic_cli")
            if caller is None:
                continue
            before = {
                id(entry)
                for _prefix, target in targets
                for entry in [*target.registered_commands, *target.registered_groups]
            }
            try:
                caller(app=app, groups=dict(groups))
            except Exception as exc:
                self._host.mark_failed(info.name, f"{type(exc).__name__}: {exc}")
                continue
            names: list[str] = []
            for prefix, target in targets:
                target.registered_commands = [
                    e
                    for e in target.registered_commands
                    if self._keep(e, before, owners, info, names, prefix)
                ]
                target.registered_groups = [
                    e
                    for e in target.registered_groups
                    if self._keep(e, before, owners, info, names, prefix)
                ]
            added[info.name] = sorted(names)
            info.provides["cli"] = added[info.name]
        return added

    def team_subscribers(
        self,
        team_card: object,
        team_id: UUID,
        *,
        refusal: tuple[type[Exception], ...] = (),
        raise_refusal: bool = True,
    ) -> list[EventSubscriber]:
        """The subscribers every plugin attaches to a team (hook ``akgentic_team_subscribers``).

        Called by a ``TeamManager`` once per team run, never cached. A plugin whose
        hook raises, or returns an object with none of the subscriber hooks, is
        marked failed (one log line) and contributes nothing; the others still
        run. An exception of a ``refusal`` type is the plugin refusing the card
        instead: it propagates when ``raise_refusal``, and is otherwise logged on
        one line and that plugin's subscribers are skipped for this team only.
        """
        hook = "akgentic_team_subscribers"
        found: list[EventSubscriber] = []
        for info, _plugin in self._host.loaded_plugins():
            caller = self._caller_for(info.name, hook)
            if caller is None:
                continue
            try:
                subscribers = _subscribers(caller(team_card=team_card, team_id=team_id))
            except refusal as exc:
                if raise_refusal:
                    raise
                logger.warning(
                    "plugin %r refused team %s, which runs without its subscribers: %s",
                    info.name,
                    team_id,
                    _one_line(exc),
                )
                continue
            except Exception as exc:
                error = f"{hook} failed: {type(exc).__name__}: {_one_line(exc)}"
                self._host.mark_failed(info.name, error)
                continue
            found.extend(subscribers)
        return found

    def fork_steps(
        self,
        request: object,
        *,
        refusal: tuple[type[Exception], ...] = (),
        failed: Callable[[str, str], Exception] | None = None,
    ) -> list[Any]:
        """What every plugin does for a fork (hook ``akgentic_team_fork``), never cached.

        An exception of a ``refusal`` type propagates; any other failure of a hook
        refuses the fork too, as ``failed(plugin name, one line)`` (re-raised as is
        without ``failed``): a fork made without a plugin's state would be wrong,
        not partial. ``None`` results are dropped and lists flattened.
        """
        hook = "akgentic_team_fork"
        found: list[Any] = []
        for info, _plugin in self._host.loaded_plugins():
            caller = self._caller_for(info.name, hook)
            if caller is None:
                continue
            try:
                results = caller(fork=request)
            except refusal:
                raise
            except Exception as exc:
                if failed is None:
                    raise
                line = f"failed to prepare its state: {type(exc).__name__}: {_one_line(exc)}"
                raise failed(info.name, line) from exc
            for result in results:
                if result is None:
                    continue
                found.extend(result if isinstance(result, list | tuple) else [result])
        return found

    def _keep(
        self,
        entry: object,
        before: set[int],
        owners: dict[str, str],
        info: PluginInfo,
        names: list[str],
        prefix: str = "",
    ) -> bool:
        """Whether a Typer entry stays: entries a plugin adds under a taken name do not."""
        if id(entry) in before:
            return True
        name = f"{prefix} {_entry_name(entry)}" if prefix else _entry_name(entry)
        if name in owners:
            # The first owner keeps the name: the plugin's command is dropped.
            other = owners[name]
            party = f"plugin {other!r}" if other else "a built-in command"
            self._host.add_conflict(
                info.name,
                f"CLI command {name!r} collides with {party}; the plugin's command is ignored",
                other=other,
                warn=True,
            )
            return False
        owners[name] = info.name
        names.append(name)
        return True

    # -- lookups ----------------------------------------------------------
    def get(self, kind: str, name: str) -> Spec:
        """The record of ``name`` in ``kind``; unknown names raise a helpful error."""
        specs = self._kind(kind, KINDS[kind][1])
        try:
            return specs[name]
        except KeyError:
            raise self.unknown(kind, name) from None

    def unknown(self, kind: str, name: str) -> UnknownPluginNameError:
        """Build the error for a missing ``name`` of ``kind`` (listing what exists)."""
        available = list(self._kind(kind, KINDS[kind][1]))
        hint = provider_hint(kind, name)
        info = self._host.plugin(name)
        if info is not None and not info.active:
            state = "disabled" if info.status == "disabled" else f"failed: {info.error}"
            hint = f"Plugin {name!r} ({info.distribution}) is installed but {state}"
        label = KINDS[kind][1].kind
        return UnknownPluginNameError(label, name, available, hint)

    def owner(self, kind: str, name: str) -> PluginInfo | None:
        """The plugin that registered ``name`` in ``kind``, if any."""
        self._kind(kind, KINDS[kind][1])
        return self._owners.get(kind, {}).get(name)

    def web_routes(self) -> Mapping[str, WebRoutesSpec]:
        """Routes served by ``akgentic serve`` by name (hook ``akgentic_web_routes``).

        Each prefix belongs to one record: a prefix claimed twice is an error naming both.
        """
        routes = self._kind("web_routes", WebRoutesSpec)
        self._check_claims(routes, "web_routes", "web prefix", lambda spec: (spec.prefix,))
        return routes

    def event_store_for_scheme(self, scheme: str) -> EventStoreSpec:
        """The event store answering to a URL scheme (``sqlite``, ``postgresql``...)."""
        for spec in self.event_stores().values():
            if scheme in spec.schemes:
                return spec
        schemes = sorted(s for spec in self.event_stores().values() for s in spec.schemes)
        raise UnknownPluginNameError(
            "event store URL scheme", scheme, schemes, provider_hint("event_stores", scheme)
        )

    def provides(self) -> dict[str, dict[str, list[str]]]:
        """Plugin name -> kind -> names it registered, for every loaded plugin."""
        for kind, (_hook, spec_type) in KINDS.items():
            # A duplicate is still listed per plugin below (both get the status
            # ``conflict``); the error itself surfaces on real lookups.
            with contextlib.suppress(DuplicatePluginNameError):
                if kind == "event_stores":
                    self.event_stores()
                elif kind == "runtimes":
                    self.runtimes()
                elif kind == "web_routes":
                    self.web_routes()
                else:
                    self._kind(kind, spec_type)
        result: dict[str, dict[str, list[str]]] = {}
        for info, _plugin in self._host.loaded_plugins():
            result[info.name] = {k: list(v) for k, v in info.provides.items()}
        return result

    # -- internals --------------------------------------------------------
    def _caller_for(self, plugin_name: str, hook: str) -> Callable[..., Any] | None:
        pm = self._host.pm
        plugin = pm.get_plugin(plugin_name)
        if plugin is None:
            return None
        hook_caller = getattr(pm.hook, hook, None)
        if hook_caller is None:
            return None
        # Only the hook's own implementations are looked at (a team's activation asks
        # this of every plugin: walking each plugin's hooks cost ~5 ms a team).
        impls = hook_caller.get_hookimpls()
        if not any(impl.plugin is plugin for impl in impls):
            return None
        others = [impl.plugin for impl in impls if impl.plugin is not plugin]
        return cast("Callable[..., Any]", pm.subset_hook_caller(hook, remove_plugins=others))

    def _kind(self, kind: str, spec_type: type[S]) -> dict[str, S]:
        cached = self._maps.get(kind)
        if cached is not None:
            return cast("dict[str, S]", cached)  # a collected map is never changed, only dropped
        with self._lock:
            error = self._errors.get(kind)
            if error is not None:
                raise error
            cached = self._maps.get(kind)
            if cached is not None:
                return cast("dict[str, S]", cached)
            if kind in self._building:
                return {}
            self._building.add(kind)
            try:
                return self._collect(kind, spec_type)
            finally:
                self._building.discard(kind)

    def _collect(self, kind: str, spec_type: type[S]) -> dict[str, S]:
        """Call every plugin's hook of ``kind``, check the records and cache the map."""
        with self._lock:
            hook = KINDS[kind][0]
            found: dict[str, S] = {}
            owners: dict[str, PluginInfo] = {}
            pending_error: DuplicatePluginNameError | None = None
            for info, _plugin in self._host.loaded_plugins():
                caller = self._caller_for(info.name, hook)
                if caller is None:
                    continue
                try:
                    records = _flatten(caller(), spec_type, info.name, hook)
                    for record in records:
                        record.check(kind_base(record.kind))
                except Exception as exc:
                    self._host.mark_failed(info.name, f"{hook} failed: {type(exc).__name__}: {exc}")
                    continue
                info.provides[kind] = sorted(r.name for r in records)
                for record in records:
                    if record.name in found:
                        first = owners[record.name]
                        duplicate = self._conflict(spec_type.kind, record.name, first, info)
                        pending_error = pending_error or duplicate
                        continue
                    found[record.name] = record
                    owners[record.name] = info
            if pending_error is not None:
                self._errors[kind] = pending_error
                raise pending_error
            self._maps[kind] = cast("dict[str, Spec]", found)
            self._owners[kind] = owners
            return found

    def _conflict(
        self, what: str, name: str, first: PluginInfo, second: PluginInfo
    ) -> DuplicatePluginNameError:
        """Mark both plugins ``conflict`` (each naming the other) and build the error."""
        self._host.add_conflict(
            first.name, f"{what} {name!r} is also registered by {second.label}", other=second.name
        )
        self._host.add_conflict(
            second.name, f"{what} {name!r} is also registered by {first.label}", other=first.name
        )
        return DuplicatePluginNameError(
            what, name, first.label, second.label, plugins=(first.name, second.name)
        )

    def _check_schemes(
        self,
        stores: Mapping[str, EventStoreSpec] | Mapping[str, RuntimeSpec],
        kind: str = "event_stores",
    ) -> None:
        label = "event store URL scheme" if kind == "event_stores" else "cluster URL scheme"
        self._check_claims(stores, kind, label, _schemes)

    def _check_claims(
        self,
        specs: Mapping[str, Any],
        kind: str,
        label: str,
        claims: Callable[[Any], Iterable[str]],
    ) -> None:
        """Fail when two records of ``kind`` claim one key (a URL scheme, a web prefix)."""
        seen: dict[str, str] = {}
        for spec in specs.values():
            for key in claims(spec):
                if key in seen:
                    a = self.owner(kind, seen[key])
                    b = self.owner(kind, spec.name)
                    if a is not None and b is not None and a is not b:
                        raise self._conflict(label, key, a, b)
                    raise DuplicatePluginNameError(
                        label,
                        key,
                        a.label if a else seen[key],
                        b.label if b else spec.name,
                    )
                seen[key] = spec.name


def _schemes(spec: EventStoreSpec | RuntimeSpec) -> tuple[str, ...]:
    return spec.schemes


def _flatten(
    results: Iterable[Iterable[object] | None], spec_type: type[S], plugin: str, hook: str
) -> list[S]:
    records: list[S] = []
    for result in results:
        if result is None:
            continue
        for record in result:
            if not isinstance(record, spec_type):
                raise TypeError(
                    f"{hook} of plugin {plugin!r} returned {record!r}; "
                    f"expected {spec_type.__name__} records"
                )
            records.append(record)
    return records


def _subscribers(results: Iterable[Iterable[object] | None]) -> list[EventSubscriber]:
    """Flatten one plugin's ``akgentic_team_subscribers`` results, refusing non-subscribers."""
    found: list[EventSubscriber] = []
    for result in results:
        if result is None:
            continue
        for subscriber in result:
            if not any(callable(getattr(subscriber, name, None)) for name in _SUBSCRIBER_HOOKS):
                raise TypeError(f"{subscriber!r} is not an event subscriber (it has no on_message)")
            found.append(cast("EventSubscriber", subscriber))
    return found


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (a pydantic error spans several)."""
    return " ".join(str(exc).split())


def _entry_name(entry: object) -> str:
    """The name a Typer command or group entry is invoked by."""
    name = getattr(entry, "name", None)
    if name:
        return str(name)
    callback = getattr(entry, "callback", None)
    if callback is None:
        typer_instance = getattr(entry, "typer_instance", None)
        info = getattr(typer_instance, "info", None)
        name = getattr(info, "name", None)
        return str(name) if isinstance(name, str) else ""
    # Typer derives the command name from the function name this way.
    return str(callback.__name__).lower().replace("_", "-")


def _builtin_groups(app: typer.Typer) -> dict[str, typer.Typer]:
    """The command groups already on ``app`` when plugins run (the kernel's), by name."""
    groups: dict[str, typer.Typer] = {}
    for entry in app.registered_groups:
        name = _entry_name(entry)
        if name and entry.typer_instance is not None:
            groups[name] = entry.typer_instance
    return groups


def _command_names(app: typer.Typer) -> set[str]:
    names = {_entry_name(entry) for entry in [*app.registered_commands, *app.registered_groups]}
    return names - {""}
