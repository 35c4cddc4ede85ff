"""Plugin discovery and registration: the process-wide plugin host.

Start-up order (documented in docs/plugins.md):

1. The hook specifications of :mod:`akgentic.plugins.hookspecs` are added to a
   fresh pluggy ``PluginManager``.
2. The ``akgentic`` entry-point group is enumerated, once (no plugin is
   imported yet); each entry point is tagged built-in when its distribution is
   ``akgentic``. A name declared by a built-in and by another distribution
   keeps the built-in: the other one is recorded as failed. A name declared by
   several third-party distributions is ambiguous: recorded as failed.
3. Selection is applied: ``AKGENTIC_PLUGINS`` keeps only the named plugins
   (essential built-ins are always kept), ``AKGENTIC_DISABLE_PLUGINS`` drops the
   named ones (disabling an essential built-in is an error; naming a plugin
   that is not installed is a warning).
4. The selected entry points, exactly those enumerated in step 2, are loaded one
   by one through stevedore, built-ins first, then third-party plugins, each
   group in name order. An import failure is recorded on that plugin and
   skipped (an error in strict mode).
5. Each loaded module is registered into the plugin manager; a registration
   failure (bad hook signature, unknown hook name) is recorded the same way.
6. Registries per kind are built lazily, on the first lookup of that kind; each
   record is checked then (:meth:`~akgentic.plugins.specs.Spec.check`).

Loading is all or nothing: when it raises (an essential built-in disabled,
strict mode), the host is left empty and unloaded, so the next call raises the
same error instead of running with no plugin at all.

Nothing here runs on ``import akgentic``: the host is created by the first call
to :func:`get_host` and cached for the process; :func:`reset_host` drops it
(tests use it, or install an isolated host with :func:`use_host`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pluggy

from akgentic.plugins import hookspecs
from akgentic.plugins.discovery import (
    ENTRY_POINT_GROUP,
    ESSENTIAL_PLUGINS,
    KERNEL_DISTRIBUTION,
    Declared,
    declared_entry_points,
    load_extensions,
    split_env,
    truthy,
)
from akgentic.plugins.errors import EssentialPluginError, PluginLoadError
from akgentic.plugins.info import PluginInfo, PluginStatus
from akgentic.plugins.markers import PROJECT_NAME

if TYPE_CHECKING:
    from akgentic.plugins.registry import PluginRegistry

__all__ = [
    "ENTRY_POINT_GROUP",
    "ESSENTIAL_PLUGINS",
    "KERNEL_DISTRIBUTION",
    "PluginHost",
    "PluginInfo",
    "PluginStatus",
    "get_host",
    "reset_host",
    "use_host",
]

logger = logging.getLogger("akgentic.plugins")


class PluginHost:
    """One pluggy plugin manager plus the record of every plugin's fate.

    ``autoload=False`` gives an empty host (tests register inline plugins);
    ``env`` replaces ``os.environ`` for the selection variables.
    """

    def __init__(self, *, autoload: bool = True, env: Mapping[str, str] | None = None) -> None:
        self.pm = _plugin_manager()
        self._env = env
        self._autoload = autoload
        self._loaded = False
        # Set once loading has finished: read without the lock on the lookup fast path.
        self._ready = False
        self._lock = threading.RLock()
        self._plugins: dict[str, PluginInfo] = {}
        # Entry points refused because a built-in owns their name: listed, never loaded.
        self._shadowed: list[PluginInfo] = []
        # plugin name -> conflict note -> the other plugin's name ("" for a built-in command)
        self._parties: dict[str, dict[str, str]] = {}
        self._registry: PluginRegistry | None = None

    # -- environment ------------------------------------------------------
    def _getenv(self, key: str) -> str | None:
        env = os.environ if self._env is None else self._env
        return env.get(key)

    @property
    def strict(self) -> bool:
        """Whether load failures are errors (``AKGENTIC_STRICT_PLUGINS=1``)."""
        return truthy(self._getenv("AKGENTIC_STRICT_PLUGINS"))

    # -- discovery --------------------------------------------------------
    def load(self) -> None:
        """Discover and register installed plugins once (no-op afterwards)."""
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            if not self._autoload:
                self._ready = True
                return
            try:
                self._discover()
                self._ready = True
            except BaseException:
                # All or nothing: a half-loaded (or empty) host must never be served.
                self._loaded = False
                self.pm = _plugin_manager()
                self._plugins.clear()
                self._shadowed.clear()
                self._parties.clear()
                self._invalidate()
                raise

    def _discover(self) -> None:
        only = split_env(self._getenv("AKGENTIC_PLUGINS"))
        disabled = set(split_env(self._getenv("AKGENTIC_DISABLE_PLUGINS")))
        refused = sorted(disabled & ESSENTIAL_PLUGINS)
        if refused:
            raise EssentialPluginError(
                f"built-in plugin(s) {', '.join(refused)} are essential to the kernel and "
                "cannot be disabled; remove them from AKGENTIC_DISABLE_PLUGINS"
            )
        declared = declared_entry_points()
        candidates: dict[str, Declared] = {}
        for name, pairs in declared.items():
            builtin = [pair for pair in pairs if pair[0].builtin]
            if builtin:
                # A built-in's name is the kernel's: another distribution cannot take it.
                candidates[name] = builtin[0]
                for info, _ep in pairs:
                    if not info.builtin:
                        self._shadow(info)
                continue
            infos = [info for info, _ep in pairs]
            distributions = sorted({info.distribution for info in infos})
            if len(distributions) > 1:
                # Ambiguous: loading either one would silently shadow the other.
                info = infos[0]
                info.distribution = ", ".join(distributions)
                info.status = "failed"
                info.error = (
                    f"entry point name {name!r} is declared by several distributions: "
                    f"{' and '.join(distributions)}; uninstall one of them"
                )
                self._fail(info)
                continue
            candidates[name] = pairs[0]
        for variable, names in (("AKGENTIC_PLUGINS", only), ("AKGENTIC_DISABLE_PLUGINS", disabled)):
            for wanted in sorted(set(names)):
                if wanted not in declared:
                    logger.warning("%s names %r, which is not installed", variable, wanted)
        selected: list[Declared] = []
        for info, ep in candidates.values():
            keep = info.name in ESSENTIAL_PLUGINS and info.builtin
            if not keep:
                keep = (not only or info.name in only) and info.name not in disabled
            if keep:
                selected.append((info, ep))
            else:
                info.status = "disabled"
                self._plugins[info.name] = info
        # Built-ins first so that a third-party plugin can never shadow them silently.
        selected.sort(key=lambda pair: (not pair[0].builtin, pair[0].name))
        self._load_entry_points(selected)

    def _shadow(self, info: PluginInfo) -> None:
        info.status = "failed"
        info.error = (
            f"entry point name {info.name!r} belongs to the built-in plugin of "
            f"{KERNEL_DISTRIBUTION}; this one is ignored (rename the entry point or "
            f"uninstall {info.distribution or 'its distribution'})"
        )
        self._shadowed.append(info)
        self._warn(info)

    def _load_entry_points(self, selected: list[Declared]) -> None:
        if not selected:
            return
        by_name = {info.name: info for info, _ep in selected}

        def on_failure(_manager: object, entry_point: object, exc: BaseException) -> None:
            name = getattr(entry_point, "name", str(entry_point))
            info = by_name.get(name, PluginInfo(name=name))
            info.status = "failed"
            info.error = f"{type(exc).__name__}: {exc}"
            logger.debug("traceback of plugin %r import failure", name, exc_info=exc)
            self._fail(info)

        for name, plugin in load_extensions(selected, on_failure):
            info = by_name[name]
            if info.status == "failed":
                continue
            self._register_loaded(plugin, info)
        for info in by_name.values():
            if info.name not in self._plugins:
                info.status = "failed"
                info.error = "entry point was listed but could not be found by the loader"
                self._fail(info)

    def _fail(self, info: PluginInfo) -> None:
        self._plugins[info.name] = info
        self._warn(info)

    def _warn(self, info: PluginInfo) -> None:
        logger.warning(
            "akgentic plugin %r (%s %s) skipped: %s",
            info.name,
            info.distribution or "?",
            info.version or "?",
            info.error,
        )
        if self.strict:
            raise PluginLoadError(info.name, info.distribution, info.error or "")

    def _register_loaded(self, plugin: object, info: PluginInfo) -> None:
        try:
            self.pm.register(plugin, name=info.name)
            self.pm.check_pending()
        except Exception as exc:
            if self.pm.is_registered(plugin):
                self.pm.unregister(plugin)
            info.status = "failed"
            info.error = f"{type(exc).__name__}: {exc}"
            logger.debug("traceback of plugin %r registration failure", info.name, exc_info=exc)
            self._fail(info)
            return
        info.status = "loaded"
        info.hooks = sorted(impl.name for impl in self.pm.get_hookcallers(plugin) or [])
        self._plugins[info.name] = info
        self._invalidate()

    # -- explicit registration (tests, embedding applications) ------------
    def register(
        self,
        plugin: object,
        name: str,
        *,
        distribution: str = "",
        version: str = "",
        builtin: bool = False,
    ) -> PluginInfo:
        """Register an already-imported plugin object (module or instance) under ``name``."""
        with self._lock:
            if name in self._plugins and self._plugins[name].active:
                raise ValueError(f"a plugin named {name!r} is already registered")
            info = PluginInfo(
                name=name, distribution=distribution, version=version, builtin=builtin
            )
            self._register_loaded(plugin, info)
            return info

    def unregister(self, name: str) -> None:
        """Remove a plugin registered under ``name`` (no error when absent)."""
        with self._lock:
            plugin = self.pm.get_plugin(name)
            if plugin is not None:
                self.pm.unregister(plugin)
            self._plugins.pop(name, None)
            self._forget_conflicts_with(name)
            self._invalidate()

    def _forget_conflicts_with(self, gone: str) -> None:
        """A plugin left: the clashes it was a party to are over."""
        self._parties.pop(gone, None)
        for name, notes in self._parties.items():
            info = self._plugins.get(name)
            for note, other in list(notes.items()):
                if other != gone:
                    continue
                del notes[note]
                if info is not None and note in info.conflicts:
                    info.conflicts.remove(note)
            if info is not None and info.status == "conflict":
                info.error = "; ".join(info.conflicts) or None
                if not info.conflicts:
                    info.status = "loaded"

    def _invalidate(self) -> None:
        # The registry object stays (whoever holds it keeps a valid one); its maps go.
        if self._registry is not None:
            self._registry.invalidate()

    # -- queries ----------------------------------------------------------
    def plugins(self) -> list[PluginInfo]:
        """Every plugin the host knows of: loaded, conflicting, disabled and failed.

        An entry point refused because a built-in owns its name is listed too,
        after the built-in of that name.
        """
        self.load()
        infos = [*self._plugins.values(), *self._shadowed]
        return sorted(infos, key=lambda i: (not i.builtin, i.name))

    def plugin(self, name: str) -> PluginInfo | None:
        """The record of one plugin, or None."""
        self.load()
        return self._plugins.get(name)

    def loaded_plugins(self) -> list[tuple[PluginInfo, object]]:
        """Loaded plugins with their registered objects, in load order."""
        self.load()
        result = []
        for info in self.plugins():
            if not info.active or self._plugins.get(info.name) is not info:
                continue
            obj = self.pm.get_plugin(info.name)
            if obj is not None:
                result.append((info, obj))
        return result

    def add_conflict(self, name: str, note: str, *, other: str = "", warn: bool = False) -> None:
        """Record that plugin ``name`` clashes with another party (status ``conflict``).

        The plugin stays registered; ``note`` is one line naming the other party,
        ``other`` that party's plugin name when it is one (the clash ends when that
        plugin is unregistered or fails). Recording the same note twice does
        nothing. ``warn`` logs it as a warning (for clashes nothing else reports;
        a name clash already raises on lookup).
        """
        with self._lock:
            info = self._plugins.get(name)
            if info is None or not info.active or note in info.conflicts:
                return
            self._parties.setdefault(name, {})[note] = other
            info.conflicts.append(note)
            info.status = "conflict"
            # ``error`` carries the clash too, so listings show it where they show failures.
            info.error = "; ".join(info.conflicts)
            logger.log(
                logging.WARNING if warn else logging.INFO,
                "akgentic plugin %r (%s): %s",
                name,
                info.distribution or "?",
                note,
            )

    def mark_failed(self, name: str, error: str) -> None:
        """Record that a loaded plugin failed later (a hook raised); unregister it."""
        with self._lock:
            info = self._plugins.get(name)
            if info is None:
                return
            plugin = self.pm.get_plugin(name)
            if plugin is not None:
                self.pm.unregister(plugin)
            info.status = "failed"
            info.error = error
            info.conflicts.clear()
            self._forget_conflicts_with(name)
            self._invalidate()
            self._fail(info)

    @property
    def registry(self) -> PluginRegistry:
        """The typed facade over this host's hooks (built on first use)."""
        registry = self._registry
        if registry is not None and self._ready:
            return registry
        self.load()
        with self._lock:
            if self._registry is None:
                from akgentic.plugins.registry import PluginRegistry

                self._registry = PluginRegistry(self)
            return self._registry


_host: PluginHost | None = None
_host_lock = threading.Lock()


def _plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    return pm


def get_host() -> PluginHost:
    """The process-wide plugin host, discovering plugins on first call.

    A host whose discovery raised is not kept: the next call discovers again.
    """
    global _host
    host = _host
    if host is not None and host._ready:
        return host  # the common case: no lock once the process host is loaded
    with _host_lock:
        created = _host is None
        if _host is None:
            _host = PluginHost()
        host = _host
    try:
        host.load()
    except BaseException:
        if created:
            with _host_lock:
                if _host is host:
                    _host = None
        raise
    return host


def reset_host() -> None:
    """Forget the process-wide host; the next :func:`get_host` discovers again."""
    global _host
    with _host_lock:
        _host = None


@contextmanager
def use_host(host: PluginHost) -> Iterator[PluginHost]:
    """Install ``host`` as the process-wide host for the duration of the block."""
    global _host
    with _host_lock:
        previous, _host = _host, host
    try:
        yield host
    finally:
        with _host_lock:
            _host = previous
