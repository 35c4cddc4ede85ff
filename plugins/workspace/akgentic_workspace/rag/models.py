"""Params and models of the retrieval capabilities (``workspace_rag_*``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from akgentic.plugin_api import (
    COMMAND,
    LLM_CONTEXT,
    TOOL_CALL,
    BaseToolParam,
    Channels,
    ContextState,
    SerializableBaseModel,
)

__all__ = [
    "DEFAULT_RAGIGNORE",
    "NewFileMessage",
    "RagFileRow",
    "RagIndexState",
    "RagSearchHit",
    "RagSearchResult",
    "RagStatus",
    "WorkspaceRagIndex",
    "WorkspaceRagList",
    "WorkspaceRagSearch",
]

DEFAULT_RAGIGNORE: tuple[str, ...] = (
    "out/",
    "dist/",
    "venv/",
    "build/",
    "target/",
    "htmlcov/",
    "coverage/",
    "__pycache__/",
    "node_modules/",
    "site-packages/",
    "*.log",
    "*.min.js",
    "package-lock.json",
)


def _both() -> set[Channels]:
    return {TOOL_CALL, COMMAND}


class WorkspaceRagIndex(BaseToolParam):
    """``workspace_rag_index``: queue files of the tree for retrieval (opt-in: embeds cost).

    Attributes:
        chunk_chars: Soft target of a chunk.
        chunk_overlap_chars: Trailing whole blocks/lines repeated in the next chunk.
        max_chunk_chars: Hard ceiling: no chunk is ever longer.
        min_chunk_chars: A smaller chunk merges forward within its heading path.
        prepend_heading_path: Embed ``A > B > C`` before each Markdown chunk.
        ragignore: The seed of ``.ragignore`` (None = the default list).
        max_files: Files one tree may hold in its index.
        reindex_on_write: Re-index this team's written files after 5 s of quiet.
    """

    expose: set[Channels] = Field(default_factory=_both)
    chunk_chars: int = Field(default=1200, ge=1)
    chunk_overlap_chars: int = Field(default=150, ge=0)
    max_chunk_chars: int = Field(default=4000, ge=1)
    min_chunk_chars: int = Field(default=200, ge=0)
    prepend_heading_path: bool = True
    ragignore: list[str] | None = None
    max_files: int = Field(default=20_000, ge=1, le=200_000)
    reindex_on_write: bool = False

    @model_validator(mode="after")
    def _sizes(self) -> WorkspaceRagIndex:
        if not self.min_chunk_chars <= self.chunk_chars <= self.max_chunk_chars:
            raise ValueError(
                f"need min_chunk_chars ({self.min_chunk_chars}) <= chunk_chars "
                f"({self.chunk_chars}) <= max_chunk_chars ({self.max_chunk_chars})"
            )
        if self.chunk_overlap_chars >= self.chunk_chars:
            raise ValueError(
                f"chunk_overlap_chars ({self.chunk_overlap_chars}) must be below chunk_chars "
                f"({self.chunk_chars})"
            )
        return self


class WorkspaceRagList(BaseToolParam):
    """``/workspace_rag_list`` and the index's context block (never a model tool)."""

    expose: set[Channels] = Field(default_factory=lambda: {COMMAND, LLM_CONTEXT})
    max_pending_shown: int = Field(default=20, ge=0)
    max_rows_shown: int = Field(default=50, ge=1)


class WorkspaceRagSearch(BaseToolParam):
    """``workspace_rag_search``: hybrid search of the tree's index.

    Attributes:
        top_k: Default number of hits (1..50).
        alpha: Weight of the vector side in the fusion.
        score_threshold: Raw cosine floor of vector hits.
    """

    expose: set[Channels] = Field(default_factory=_both)
    top_k: int = Field(default=5, ge=1, le=50)
    alpha: float = Field(default=0.7, ge=0.0, le=1.0)
    score_threshold: float = Field(default=0.0, ge=0.0, le=1.0)


class RagStatus(StrEnum):
    """Where a file is in the pipeline."""

    PENDING = "pending"
    EXTRACTION = "extraction"
    SPLITTING = "splitting"
    EMBEDDING = "embedding"
    EMBEDDED = "embedded"
    FAILED = "failed"
    STALE = "stale"
    KEYWORD = "keyword"


class RagSearchHit(SerializableBaseModel):
    """One passage: its file, its place and lines, its score and how it matched."""

    path: str
    ordinal: int
    chunk_count: int
    start_line: int | None = None
    end_line: int | None = None
    heading_path: list[str] = Field(default_factory=list)
    score: float | None = None
    match: Literal["semantic", "hybrid", "keyword"] = "keyword"
    text: str = ""
    stale: bool = False


class RagSearchResult(SerializableBaseModel):
    """Hits, best first, and a note saying what limited the search."""

    hits: list[RagSearchHit] = Field(default_factory=list)
    note: str | None = None


class NewFileMessage(SerializableBaseModel):
    """Told to ``#Workspace`` by an upload handler: queue these paths at once."""

    model_config = ConfigDict(extra="forbid")

    paths: list[str]
    source: str = "upload"
    force: bool = False


class RagFileRow(SerializableBaseModel):
    """One file of the index as the context state shows it."""

    path: str
    status: RagStatus
    chunk_count: int = 0
    reason: str | None = None


class RagIndexState(ContextState):
    """The index as the last turn's context block saw it (rows capped, counts whole)."""

    rows: list[RagFileRow] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)

    def render_full(self) -> str:
        """The list's head line and its rows."""
        total = sum(self.counts.values())
        if total == 0:
            return ""
        head = ", ".join(f"{n} {s}" for s, n in sorted(self.counts.items()))
        lines = [f"**Workspace retrieval index:** {total} file(s) — {head}"]
        for row in self.rows:
            reason = f" — {row.reason}" if row.reason else ""
            lines.append(f"- {row.path} [{row.status.value}] {row.chunk_count} chunk(s){reason}")
        return "\n".join(lines)

    def render_delta(self, previous: RagIndexState) -> str | None:
        """One phrase per change, at most 20, then how many more."""
        before = {r.path: r for r in previous.rows}
        now = {r.path: r for r in self.rows}
        phrases: list[str] = []
        pending = 0
        for path, row in now.items():
            old = before.get(path)
            if old is None:
                if row.status is RagStatus.PENDING:
                    pending += 1
                else:
                    phrases.append(f"Indexing {path}: {row.status.value}.")
            elif old.status is not row.status:
                phrases.append(f"{path}: {old.status.value} → {row.status.value}.")
                if row.status in (RagStatus.EMBEDDED, RagStatus.KEYWORD):
                    phrases.append(f"{path}: {row.chunk_count} chunk(s).")
        phrases.extend(f"No longer indexed: {p}." for p in before if p not in now)
        if pending:
            phrases.append(f"{pending} more pending.")
        if not phrases:
            return None
        extra = len(phrases) - 20
        shown = phrases[:20] + ([f"(+{extra} more changes)"] if extra > 0 else [])
        return "\n".join(shown)
