"""Agents the vector-store team tests spawn; importable by dotted path so restores find them.

``StoreUser`` behaves as a consumer card does: it binds its store param before it
exists (in ``__init__``, on the creating thread, so a refused param fails the team
build), then ensures the ``#VectorStore`` and creates its collection on start.
"""

from __future__ import annotations

from typing import Any

from akgentic.core import BaseConfig, BaseState
from akgentic.core.agent import Akgent
from akgentic.vector import (
    VectorStoreActor,
    VectorStoreParam,
    bind_store,
    ensure_store_actor,
    find_store_actor,
)

COLLECTION = "planning"


class StoreUserConfig(BaseConfig):
    """The store param the agent consumes, as a card would carry it."""

    vector_store: VectorStoreParam | bool = True


class StoreUser(Akgent[StoreUserConfig, BaseState]):
    """Binds its store at construction, creates its collection on start."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        config = kwargs.get("config")
        value = config.vector_store if isinstance(config, StoreUserConfig) else True
        self.binding = bind_store(f"StoreUser {getattr(config, 'name', '')}", value)
        super().__init__(*args, **kwargs)

    def on_start(self) -> None:
        self.store: Any = None
        if self.binding is None or not self.binding.needs_actor:
            return
        ensure_store_actor(self.binding.param, self.orchestrator_proxy_ask)
        self.store = self.proxy_ask(find_store_actor(self), VectorStoreActor, 30)
        self.store.create_collection(COLLECTION, self.binding.param)

    def store_address(self) -> Any:
        member = self.get_team_member("#VectorStore")
        return member
