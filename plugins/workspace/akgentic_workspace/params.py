"""Params of :class:`~akgentic_workspace.card.WorkspaceTool`, one per capability, and its models."""

from __future__ import annotations

import base64
import binascii
import os
from enum import StrEnum
from typing import ClassVar, Literal
from uuid import UUID

from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator

from akgentic.plugin_api import (
    COMMAND,
    TOOL_CALL,
    BaseToolParam,
    Channels,
    ResourceLimits,
    SerializableBaseModel,
)

__all__ = [
    "EXEC_BUDGET_CEILING_S",
    "DocumentReader",
    "EditItem",
    "ExpandMediaRefs",
    "Resource",
    "ResourceType",
    "WorkspaceAttached",
    "WorkspaceDelete",
    "WorkspaceEdit",
    "WorkspaceExec",
    "WorkspaceGlob",
    "WorkspaceGrep",
    "WorkspaceList",
    "WorkspaceMkdir",
    "WorkspaceMultiEdit",
    "WorkspacePatch",
    "WorkspaceRead",
    "WorkspaceRmdir",
    "WorkspaceView",
    "WorkspaceWrite",
]

#: No run may last longer than this, whatever ``timeout_s`` says: teardown must fit
#: inside the orchestrator's stop backstop.
EXEC_BUDGET_CEILING_S = 20.0


def _both() -> set[Channels]:
    return {TOOL_CALL, COMMAND}


class DocumentReader(SerializableBaseModel):
    """How binary documents (PDF, Office, e-mail, images) become Markdown for reading.

    The first pass is MarkItDown alone; when it yields almost nothing and an LLM client
    or a Document Intelligence endpoint is configured, a second pass retries with it.
    The Document Intelligence key is read from the environment when needed and never
    serialized.
    """

    model_config = ConfigDict(extra="forbid", defer_build=False)

    extensions: ClassVar[frozenset[str]] = frozenset(
        {".pdf", ".docx", ".xlsx", ".xls", ".pptx", ".msg", ".epub"}
        | {".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp"}
    )

    llm_client: Literal["openai", "azure"] | None = Field(
        default_factory=lambda: _env_provider(os.environ.get("AKGENTIC_DOCUMENT_READER_PROVIDER"))
    )
    llm_model: str = Field(
        default_factory=lambda: os.environ.get("AKGENTIC_DOCUMENT_READER_MODEL", "gpt-4.1-mini")
    )
    docintel_endpoint: str | None = Field(
        default_factory=lambda: os.environ.get("AKGENTIC_DOCUMENT_READER_DOCINTEL_ENDPOINT") or None
    )


def _env_provider(value: str | None) -> Literal["openai", "azure"] | None:
    cleaned = (value or "").strip().lower()
    if cleaned == "openai":
        return "openai"
    if cleaned == "azure":
        return "azure"
    return None


class WorkspaceRead(BaseToolParam):
    """``workspace_read`` (model) and ``/workspace_read`` (people).

    Attributes:
        default_limit: Lines shown when the caller gives no ``limit``.
        force_document_regeneration: Default of the tool argument of the same name.
        document_reader: How binary documents are extracted; ``False`` refuses them.
    """

    expose: set[Channels] = Field(default_factory=_both)
    default_limit: int = Field(default=2000, ge=1)
    force_document_regeneration: bool = False
    document_reader: DocumentReader | bool = True


class WorkspaceView(BaseToolParam):
    """``workspace_view``: an image for a vision model.

    Attributes:
        max_dimension: Longest side after resizing (0 sends the image as it is).
    """

    max_dimension: int = Field(default=1568, ge=0)


class WorkspaceList(BaseToolParam):
    """``workspace_list``; ``max_depth`` is the default of ``depth``, not a ceiling.

    One call shows at most ``max_entries`` entries (and 50,000 characters), then a
    note giving the ``offset`` of the next page.
    """

    expose: set[Channels] = Field(default_factory=_both)
    max_depth: int = Field(default=1, ge=0)
    max_entries: int = Field(default=500, ge=1)


class WorkspaceGlob(BaseToolParam):
    """``workspace_glob``; at most ``max_results`` paths are listed."""

    expose: set[Channels] = Field(default_factory=_both)
    max_results: int = Field(default=100, ge=1)


class WorkspaceGrep(BaseToolParam):
    """``workspace_grep``; one cap on matching lines for the whole search."""

    expose: set[Channels] = Field(default_factory=_both)
    max_results: int = Field(default=100, ge=1)
    max_line_length: int = Field(default=2000, ge=20)


class ExpandMediaRefs(BaseToolParam):
    """``expand_media_refs``: ``!!pattern`` in a prompt becomes the matching images."""

    expose: set[Channels] = Field(default_factory=lambda: {COMMAND})


class WorkspaceWrite(BaseToolParam):
    """``workspace_write`` and ``/workspace_write``."""

    expose: set[Channels] = Field(default_factory=_both)


class WorkspaceDelete(BaseToolParam):
    """``workspace_delete`` and ``/workspace_delete``."""

    expose: set[Channels] = Field(default_factory=_both)


class WorkspaceMkdir(BaseToolParam):
    """``workspace_mkdir`` and ``/workspace_mkdir``."""

    expose: set[Channels] = Field(default_factory=_both)


class WorkspaceEdit(BaseToolParam):
    """``workspace_edit``: one string replacement."""


class WorkspaceMultiEdit(BaseToolParam):
    """``workspace_multi_edit``: several replacements over several files, all or nothing."""


class WorkspacePatch(BaseToolParam):
    """``workspace_patch``: a unified diff over one or more files, all or nothing."""


class WorkspaceRmdir(BaseToolParam):
    """``workspace_rmdir`` and ``/workspace_rmdir``.

    Attributes:
        allow_recursive: ``False`` drops ``recursive`` and ``force`` from the signature.
    """

    expose: set[Channels] = Field(default_factory=_both)
    allow_recursive: bool = True


class WorkspaceExec(BaseToolParam):
    """``workspace_exec`` / ``workspace_exec_result``: commands in a sandbox over the tree.

    Nothing here reaches the model's signatures.

    Attributes:
        backend: Sandbox backend name (else ``AKGENTIC_SANDBOX_BACKEND``, else the first
            usable of bwrap, docker); resolved when the card is bound.
        timeout_s: Run budget in seconds, clamped to 20.
        poll_attempts: ``-1`` waits the run out, ``N`` looks N times, ``0`` never waits.
        poll_delay_seconds: Length of one look.
        limits: Resource ceilings of the run (network off unless enabled here).
        env: Extra environment variables of the run.
    """

    expose: set[Channels] = Field(default_factory=_both)
    backend: str | None = None
    timeout_s: float = Field(default=15.0, gt=0)
    poll_attempts: int = Field(default=-1, ge=-1)
    poll_delay_seconds: float = Field(default=0.5, gt=0)
    limits: ResourceLimits = Field(default_factory=ResourceLimits)
    env: dict[str, str] = Field(default_factory=dict)

    @property
    def budget_s(self) -> float:
        """The run budget actually applied (``timeout_s`` clamped to the ceiling)."""
        return min(self.timeout_s, EXEC_BUDGET_CEILING_S)


class _ExecResultCommand(WorkspaceExec):
    """Key of the ``/workspace_exec_result`` command (configured by ``workspace_exec``)."""


class ResourceType(StrEnum):
    """How a seeded resource's content is written."""

    TEXT = "text"
    IMAGE = "image"


class Resource(SerializableBaseModel):
    """A file seeded into the tree when the card is bound and the file is absent."""

    model_config = ConfigDict(extra="forbid", defer_build=False)

    file_name: str
    file_type: ResourceType = ResourceType.TEXT
    content: str

    _data: bytes = PrivateAttr(default=b"")

    @field_validator("file_name")
    @classmethod
    def _relative_path(cls, value: str) -> str:
        from akgentic_workspace.paths import normalise_argument

        normal = normalise_argument(value)
        if normal in ("", "."):
            raise ValueError("a resource needs a file name")
        return normal

    @model_validator(mode="after")
    def _decode(self) -> Resource:
        if self.file_type is ResourceType.IMAGE:
            try:
                self._data = base64.b64decode(self.content, validate=True)
            except (binascii.Error, ValueError) as error:
                raise ValueError(f"resource {self.file_name!r}: content is not base64") from error
        else:
            self._data = self.content.encode("utf-8")
        return self

    @property
    def data(self) -> bytes:
        """The bytes written into the tree."""
        return self._data


class EditItem(SerializableBaseModel):
    """One replacement of :func:`workspace_multi_edit`."""

    model_config = ConfigDict(extra="forbid", defer_build=False)

    path: str
    old_string: str
    new_string: str
    replace_all: bool = False


class WorkspaceAttached(SerializableBaseModel):
    """Emitted when an agent's card is bound to its tree."""

    agent_id: UUID
    workspace_path: str
