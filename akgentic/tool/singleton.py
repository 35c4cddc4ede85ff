"""Helpers for cards that own one tool actor per team (``#PlanningTool``, ``#KnowledgeGraphTool``).

Such a card binds its vector store param, creates the actor once under the
orchestrator (get-or-create; the first card fixes the actor's settings, a later card
with other settings is warned about), and asks it through a blocking proxy that turns
a dead actor into a RetriableError the model can act on. The actor keeps its rows in
one vector collection (:class:`VectorRows`) and restores its state by replaying its
own numbered state events (:func:`state_events_after`).

Example (card side)::

    param, self._semantic_off = semantic_switch(bind_store("PlanningTool", self.vector_store))
    self._actor = create_tool_actor(observer, PlanActor, config, param, "PlanningTool")
    ...
    lines = ask_tool_actor(self._observer_or_none(), self._actor, lambda a: a.search(r), GONE)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from akgentic.core.agent_config import BaseConfig
from akgentic.tool.core.event import ToolStateEvent
from akgentic.tool.errors import RetriableError
from akgentic.vector.param import VectorStoreParam

if TYPE_CHECKING:
    from akgentic.core.actor_address import ActorAddress
    from akgentic.core.messages.orchestrator import EventMessage
    from akgentic.vector.param import StoreBinding

__all__ = [
    "ASK_TIMEOUT_S",
    "SEARCH_SETTINGS",
    "SEMANTIC_DISABLED",
    "SearchActorConfig",
    "VectorRows",
    "ask_tool_actor",
    "create_tool_actor",
    "first_errors",
    "model_input",
    "search_actor_config",
    "semantic_switch",
    "state_events_after",
    "unavailable_sentence",
]

logger = logging.getLogger(__name__)

ASK_TIMEOUT_S = 30.0
"""Bound of one card-to-actor and actor-to-store ask (below the 30 s stop backstop)."""

SEMANTIC_DISABLED = (
    "Semantic search is switched off for this tool (vector_store=False). "
    "Keyword and hybrid search still work."
)

P = TypeVar("P")
M = TypeVar("M", bound=BaseModel)
Row = tuple[str, str, str]
"""A vector row to write: ``(ref_type, ref_id, text)``."""


class SearchActorConfig(BaseConfig):
    """Settings of a searchable tool actor, fixed by the first card that creates it.

    A card's actor config subclasses this (and may change the threshold's default).
    """

    vector_store: VectorStoreParam | None = None
    search_top_k: int = 10
    search_score_threshold: float = 0.5
    hybrid_alpha: float = Field(default=0.7, ge=0.0, le=1.0)


SEARCH_SETTINGS = ("vector_store", "search_top_k", "search_score_threshold", "hybrid_alpha")
"""The :class:`SearchActorConfig` fields a later card is warned about when they differ."""


def unavailable_sentence(reason: str) -> str:
    """What vector mode says when a store was asked for but cannot run."""
    return f"Semantic search is unavailable ({reason}). Keyword and hybrid search still work."


def semantic_switch(binding: StoreBinding | None) -> tuple[VectorStoreParam | None, str | None]:
    """The param the actor gets, and the sentence vector mode answers with (None: it runs)."""
    if binding is None:
        return None, SEMANTIC_DISABLED
    if binding.unavailable is not None:
        return None, unavailable_sentence(binding.unavailable)
    return binding.param, None


# ---------------------------------------------------------------- card side

C = TypeVar("C", bound=SearchActorConfig)


def search_actor_config(
    config_type: type[C], name: str, param: VectorStoreParam | None, card: object
) -> C:
    """The actor config a card asks for: ``param`` and the card's own search settings.

    The card carries the :data:`SEARCH_SETTINGS` fields under the same names; the
    store param is the bound one (``param``), not the card's raw ``vector_store``.
    """
    settings = {key: getattr(card, key) for key in SEARCH_SETTINGS if key != "vector_store"}
    return config_type(name=name, role="ToolActor", vector_store=param, **settings)


def create_tool_actor(
    observer: Any,
    actor_class: type,
    config: BaseConfig,
    param: VectorStoreParam | None,
    label: str,
    settings: Sequence[str] = SEARCH_SETTINGS,
) -> ActorAddress:
    """Get-or-create ``config.name`` under the observer's orchestrator (and its store actor).

    The first card to create the actor fixes its settings; when the existing actor's
    ``settings`` differ from ``config``'s, one WARNING names them.

    Raises:
        ValueError: The observer has no orchestrator.
    """
    from akgentic.vector import ensure_store_actor

    orchestrator = getattr(observer, "orchestrator", None)
    if orchestrator is None:
        raise ValueError(f"{label} requires access to the orchestrator.")
    proxy = observer.proxy_ask(orchestrator, timeout=ASK_TIMEOUT_S)
    ensure_store_actor(param, proxy)
    address: ActorAddress = proxy.getChildrenOrCreate(actor_class, config=config)
    try:
        actual = observer.proxy_ask(address, timeout=ASK_TIMEOUT_S).config
    except Exception:  # the warning is advice; binding goes on without it
        return address
    differ = [k for k in settings if getattr(actual, k, None) != getattr(config, k)]
    if differ:
        logger.warning(
            "%s: %s already exists; its settings win over this card's %s",
            label,
            config.name,
            ", ".join(differ),
        )
    return address


def ask_tool_actor(
    observer: Any, actor: ActorAddress | None, call: Callable[[Any], P], gone: str
) -> P:
    """``call(proxy)`` on the live tool actor; RetriableError(``gone``) when it is not there.

    A RetriableError raised by the actor passes through; any other failure is logged
    and becomes RetriableError(``gone``).
    """
    if observer is None or actor is None or not actor.is_alive():
        raise RetriableError(gone)
    proxy = observer.proxy_ask(actor, timeout=ASK_TIMEOUT_S)
    try:
        return call(proxy)
    except RetriableError:
        raise
    except Exception as error:
        logger.warning("%s failed (%s)", actor.name, error)
        raise RetriableError(gone) from error


def first_errors(error: ValidationError, limit: int = 3, where: str = "input") -> str:
    """The first few validation problems, each located, without echoing the input."""
    parts = []
    for item in error.errors()[:limit]:
        located = ".".join(str(p) for p in item.get("loc", ())) or where
        parts.append(f"{located}: {item.get('msg', 'invalid')}")
    more = error.error_count() - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def model_input(value: object, model: type[M], what: str, where: str = "input") -> M:
    """A tool argument as ``model``: an instance passes as is, anything else is validated.

    Raises:
        RetriableError: ``Invalid <what>: <the first problems>``, which the model can fix
            on its next try (the input itself is not echoed).
    """
    if isinstance(value, model):
        return value
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise RetriableError(f"Invalid {what}: {first_errors(error, where=where)}") from None


# --------------------------------------------------------------- actor side


class VectorRows:
    """A tool actor's rows in one vector collection, and the embedder that makes them.

    Built in the actor's ``on_start``. Without a param, or when the store or embedder
    cannot be had (one WARNING), :attr:`store` and :attr:`embedder` are None and every
    method does nothing: the actor works keyword-only. A failed write never fails the
    mutation that asked for it (one WARNING; :meth:`heal` repairs it on restore).
    """

    def __init__(
        self, actor: Any, param: VectorStoreParam | None, collection: str, label: str
    ) -> None:
        self.collection = collection
        self.label = label
        self.store: Any = None
        self.embedder: Any = None
        if param is None:
            return
        try:
            from akgentic.core.proxy import ProxyWrapper
            from akgentic.vector import build_backend, build_embedder, needs_store_actor
            from akgentic.vector.actor import find_store_actor

            if needs_store_actor(param):
                self.store = ProxyWrapper(find_store_actor(actor), timeout=ASK_TIMEOUT_S)
            else:
                self.store = build_backend(param, str(actor.team_id))
            self.store.create_collection(collection, param)
            self.embedder = build_embedder(param)
        except Exception as error:
            logger.warning("%s: semantic search is off (%s)", label, error)
            self.store = None
            self.embedder = None

    def sync(self, unindex: Sequence[str], rows: Sequence[Row]) -> None:
        """Remove the rows ``unindex`` names, then write ``rows``."""
        if self.store is None:
            return
        try:
            if unindex:
                self.store.remove(self.collection, list(unindex))
            self.add(rows)
        except Exception as error:
            logger.warning("%s: vector rows not updated (%s)", self.label, error)

    def add(self, rows: Sequence[Row]) -> None:
        """Embed ``rows`` in batches and write them (rows with an empty vector are left out)."""
        if not rows or self.store is None or self.embedder is None:
            return
        from akgentic.vector import VectorEntry, embed_batched

        vectors = embed_batched(
            self.embedder, [text for _k, _r, text in rows], getattr(self.embedder, "max_batch", 256)
        )
        entries = [
            VectorEntry(ref_type=kind, ref_id=ref, text=text, vector=vector)
            for (kind, ref, text), vector in zip(rows, vectors, strict=True)
            if vector
        ]
        if entries:
            self.store.add(self.collection, entries)

    def heal(self, rows: Callable[[], Sequence[Row]]) -> None:
        """Write every row of ``rows()`` again once, when the store holds fewer of them."""
        if self.store is None:
            return
        try:
            wanted = rows()
            if int(self.store.count(self.collection)) < len(wanted):
                self.add(wanted)
        except Exception as error:
            logger.warning("%s: vector rows not healed (%s)", self.label, error)


def state_events_after(
    events: Iterable[EventMessage], tool_id: str, after_seq: int, payload_type: type[P]
) -> Iterator[tuple[int, P]]:
    """``(seq, payload)`` of ``tool_id``'s own state events past ``after_seq``, in order."""
    for message in events:
        event = message.event
        if not (isinstance(event, ToolStateEvent) and event.tool_id == tool_id):
            continue
        payload = event.payload
        if event.seq <= after_seq or not isinstance(payload, payload_type):
            continue
        yield event.seq, payload
