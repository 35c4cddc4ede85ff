"""``PlanningTool``: the team's shared task board, served by ``#PlanningTool``.

Every agent of a team that carries the card asks the same :class:`PlanActor`
(created once, through the orchestrator's get-or-create). The board reaches the
model as context state, one full rendering and then per-turn deltas, scoped by
default to the tasks the agent owns or handed out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, PrivateAttr, field_validator

from akgentic.plugin_api import (
    COMMAND,
    LLM_CONTEXT,
    SAME_AS_TOOL,
    TOOL_CALL,
    ActorAddress,
    BaseToolParam,
    Capability,
    CapabilityCard,
    Channels,
    ContextState,
    RestOfLine,
    RetriableError,
    ToolObserver,
    VectorStoreParam,
    ask_tool_actor,
    create_tool_actor,
    model_input,
    normalize_system_prompt_to_llm_context,
    search_actor_config,
    semantic_switch,
)
from akgentic_planning.models import (
    MAX_DESCRIPTION_CHARS,
    MAX_OUTPUT_CHARS,
    PLANNING_ACTOR_NAME,
    PlanConfig,
    Task,
    UpdatePlan,
)
from akgentic_planning.search import SearchRequest, check_bounds
from akgentic_planning.state import PlanningState

__all__ = ["GetPlanning", "GetPlanningTask", "PlanningTool", "SearchPlanning", "UpdatePlanning"]

logger = logging.getLogger(__name__)

GONE = "Plan is unavailable; the agent is shutting down."


class GetPlanning(BaseToolParam):
    """The board as context state (``planning_state``) and ``/planning_summary``.

    Attributes:
        filter_by_agent: Show only the tasks the agent owns, or assigned to someone
            else after creating them; False shows every task.
    """

    expose: set[Channels] = Field(default_factory=lambda: {LLM_CONTEXT, COMMAND})
    filter_by_agent: bool = True

    @field_validator("expose")
    @classmethod
    def _moved_to_context(cls, value: set[Channels]) -> set[Channels]:
        return normalize_system_prompt_to_llm_context(value)


class GetPlanningTask(BaseToolParam):
    """``get_planning_task(task_id)``: one task by id."""

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL, COMMAND})


class UpdatePlanning(BaseToolParam):
    """``update_planning(update)``: create, update and delete tasks (never a command)."""

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL})


class SearchPlanning(BaseToolParam):
    """``search_planning(query, mode, ...)``: filter and rank tasks."""

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL, COMMAND})


class PlanningTool(CapabilityCard):
    """The team's task board: create, assign, track and search tasks.

    Example YAML in a team file::

        tools:
          - card: planning
            get_planning:
              filter_by_agent: false
    """

    vector_store: VectorStoreParam | bool = True
    search_top_k: int = Field(default=10, ge=1, le=100)
    search_score_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    hybrid_alpha: float = Field(default=0.7, ge=0.0, le=1.0)
    get_planning: GetPlanning | bool = True
    get_planning_task: GetPlanningTask | bool = True
    update_planning: UpdatePlanning | bool = True
    search_planning: SearchPlanning | bool = True

    _actor: ActorAddress | None = PrivateAttr(default=None)
    _agent_name: str = PrivateAttr(default="")
    _semantic_off: str | None = PrivateAttr(default=None)

    # ------------------------------------------------------------ wiring

    def observer(self, observer: ToolObserver) -> PlanningTool:
        """Check the store, then create (or find) ``#PlanningTool`` under the orchestrator.

        Raises:
            ValueError: The store param fails its checks (before any actor exists), or
                the observer has no orchestrator.
        """
        from akgentic.plugin_api import bind_store

        binding = bind_store("PlanningTool", self.vector_store)
        super().observer(observer)
        param, self._semantic_off = semantic_switch(binding)
        from akgentic_planning.actor import PlanActor

        config = search_actor_config(PlanConfig, PLANNING_ACTOR_NAME, param, self)
        self._actor = create_tool_actor(observer, PlanActor, config, param, "PlanningTool")
        self._agent_name = observer.myAddress.name  # type: ignore[attr-defined]
        return self

    def _ask(self, call: Callable[[Any], Any]) -> Any:
        return ask_tool_actor(self._observer_or_none(), self._actor, call, GONE)

    def state_for(self, filter_by_agent: bool) -> PlanningState:
        """The context state of the agent this card is bound to."""
        state: PlanningState = self._ask(
            lambda actor: actor.get_view(self._agent_name, filter_by_agent)
        )
        return state

    # ---------------------------------------------------------- searching

    def _search(self, request: SearchRequest) -> list[str]:
        check_bounds(request.top_k, request.score_threshold)
        if request.mode == "vector" and (request.query or "").strip() and self._semantic_off:
            return [self._semantic_off]
        lines: list[str] = self._ask(lambda actor: actor.search(request))
        return lines

    # ---------------------------------------------------------- builders

    def _build_summary(self, param: GetPlanning) -> Callable[..., str]:
        filter_by_agent = param.filter_by_agent

        def planning_summary() -> str:
            """Show the team planning as this agent sees it."""
            return self.state_for(filter_by_agent).render_full()

        return planning_summary

    def _build_get_task(self, param: GetPlanningTask) -> Callable[..., Task | str]:
        def get_planning_task(task_id: int) -> Task | str:
            """Look up one task of the team planning by its id.

            Args:
                task_id: The task's integer id.
            """
            task: Task | None = self._ask(lambda actor: actor.get_task(task_id))
            return "No task with that ID." if task is None else task

        return get_planning_task

    def _build_update(self, param: UpdatePlanning) -> Callable[..., str]:
        def update_planning(update: UpdatePlan) -> str:
            """Change the team planning: create, update and delete tasks in one call.

            Creates run first, then updates, then deletes. You choose each new task's
            integer id; it must not be in use. Dependencies must name existing tasks.
            A description holds at most {desc} characters; an output longer than
            {out} characters is shortened. Set owner to a member's name to assign a
            task, "" to leave it unassigned.

            Args:
                update: The tasks to create, the changes to make and the ids to delete.
            """
            plan = model_input(update, UpdatePlan, "update", where="update")
            observer = self._observer_or_none()
            if observer is None:
                raise RetriableError(GONE)
            me = self._agent_name
            result = self._ask(lambda actor: actor.update_planning(plan, me))
            return str(result)

        update_planning.__doc__ = (
            (update_planning.__doc__ or "")
            .replace("{desc}", str(MAX_DESCRIPTION_CHARS))
            .replace("{out}", str(MAX_OUTPUT_CHARS))
        )
        return update_planning

    def _build_search_tool(self, param: SearchPlanning) -> Callable[..., list[str]]:
        def search_planning(
            query: str | None = None,
            mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
            status: str | None = None,
            owner: str | None = None,
            creator: str | None = None,
            top_k: int | None = None,
            score_threshold: float | None = None,
        ) -> list[str]:
            """Find tasks of the team planning by words, meaning and exact fields.

            Without a query every task passing the field filters is listed in board
            order. Field filters are exact; owner "" matches unassigned tasks.

            Args:
                query: Words to look for in task descriptions.
                mode: "hybrid" (words and meaning), "vector" (meaning) or "keyword".
                status: Only tasks in this status (pending, started, completed, abort).
                owner: Only tasks with this owner.
                creator: Only tasks created by this agent.
                top_k: At most this many results when there is a query (1 to 100).
                score_threshold: Minimum semantic score, between 0 and 1.
            """
            return self._search(
                SearchRequest(
                    query=query,
                    mode=mode,
                    status=status,
                    owner=owner,
                    creator=creator,
                    top_k=top_k,
                    score_threshold=score_threshold,
                )
            )

        return search_planning

    def _build_search_command(self, param: SearchPlanning) -> Callable[..., str]:
        def search_planning(
            mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
            status: str | None = None,
            owner: str | None = None,
            creator: str | None = None,
            top_k: int | None = None,
            score_threshold: float | None = None,
            query: RestOfLine = "",
        ) -> str:
            """Search the team planning, e.g. ``/search_planning mode=keyword deploy``.

            Args:
                mode: hybrid, vector or keyword.
                status: Only tasks in this status.
                owner: Only tasks with this owner.
                creator: Only tasks created by this agent.
                top_k: At most this many results.
                score_threshold: Minimum semantic score.
                query: The words to search for (the rest of the line).
            """
            lines = self._search(
                SearchRequest(
                    query=str(query) or None,
                    mode=mode,
                    status=status,
                    owner=owner,
                    creator=creator,
                    top_k=top_k,
                    score_threshold=score_threshold,
                )
            )
            return "\n".join(lines) if lines else "No tasks found."

        return search_planning

    # ------------------------------------------------------------ hooks

    def capabilities(self) -> list[Capability]:
        """The board's tools and commands; the search command reads a typed line."""
        return [
            Capability("get_planning", self._build_summary, SAME_AS_TOOL, name="planning_summary"),
            Capability("get_planning_task", self._build_get_task, SAME_AS_TOOL),
            Capability("update_planning", self._build_update),
            Capability(
                "search_planning",
                self._build_search_tool,
                self._build_search_command,
                command_instructions=True,
            ),
        ]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        param = self._param(self.get_planning, GetPlanning, LLM_CONTEXT)
        if param is None:
            return []
        filter_by_agent = param.filter_by_agent

        def planning_state() -> ContextState | None:
            try:
                state: ContextState = self.state_for(filter_by_agent)
                return state
            except Exception:
                logger.debug("planning state unavailable", exc_info=True)
                return None

        return [planning_state]
