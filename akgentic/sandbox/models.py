"""The data of a sandboxed run: the limits it runs under and what it reports."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["TIMEOUT_EXIT_CODE", "ExecResult", "ResourceLimits"]

#: Exit code of a run killed for passing its time budget (as coreutils ``timeout``).
TIMEOUT_EXIT_CODE = 124

_GIB = 1024**3
_MIB = 1024**2


class ResourceLimits(BaseModel):
    """Ceilings applied to every process of a run.

    ``cpu_s``, ``memory_bytes`` (address space), ``max_file_bytes``,
    ``max_open_files`` and ``max_processes`` become rlimits (or the container's
    equivalents); ``output_bytes`` bounds what is kept of each of stdout and stderr;
    ``tmp_bytes`` sizes the private temporary and home directories; ``network``
    turns the network on (off by default: only loopback exists inside).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_s: int = Field(default=60, gt=0)
    memory_bytes: int = Field(default=2 * _GIB, gt=0)
    max_processes: int = Field(default=256, gt=0)
    max_file_bytes: int = Field(default=1 * _GIB, gt=0)
    max_open_files: int = Field(default=1024, gt=0)
    output_bytes: int = Field(default=1 * _MIB, ge=16)
    tmp_bytes: int = Field(default=512 * _MIB, gt=0)
    network: bool = False


class ExecResult(BaseModel):
    """The outcome of one sandboxed command.

    ``exit_code`` is the command's own, ``124`` when it was killed for time
    (``timed_out``), ``128 + N`` when signal ``N`` ended it. The streams are UTF-8
    with undecodable bytes replaced; a stream over the output limit keeps its first
    quarter and last three quarters and says so in ``*_truncated``. Timing:
    ``queued_s`` (waiting before the backend was asked), ``prepare_s`` (cold start
    paid by this run, 0 when the backend was warm), ``duration_s`` (the command
    itself, from ``started_at``, an epoch time).
    """

    model_config = ConfigDict(frozen=True)

    exit_code: int
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    killed: bool = False
    signal: int | None = None
    started_at: float = 0.0
    duration_s: float = 0.0
    prepare_s: float = 0.0
    queued_s: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the command exited 0 on its own."""
        return self.exit_code == 0 and not self.timed_out and not self.killed
