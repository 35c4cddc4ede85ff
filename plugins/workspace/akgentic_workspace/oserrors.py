"""The host's ``OSError``s as tool errors the model can act on.

Every workspace tool passes through :func:`tool_errors` once (``WorkspaceTool.get_tools``),
so a name over the filesystem's limit, a full disk or a read-only mount ends the call with
a :class:`~akgentic.tool.errors.RetriableError` naming the problem and what to do, instead
of an unhandled exception that ends the agent's turn. The message never carries the
error's file name: that is a host path, and the model knows the path it gave.
"""

from __future__ import annotations

import errno
import functools
import inspect
import os
from collections.abc import Callable
from typing import Any

from akgentic.plugin_api import RetriableError

__all__ = ["describe_os_error", "tool_errors"]

_ADVICE: dict[int, str] = {
    errno.ENAMETOOLONG: (
        "a file or directory name is longer than the filesystem allows (255 bytes per "
        "name, 4096 per path); use a shorter name"
    ),
    errno.ENOSPC: (
        "the workspace's disk is full; delete files that are no longer needed, or tell "
        "the user, then try again"
    ),
    errno.EDQUOT: (
        "the workspace's disk quota is used up; delete files that are no longer needed, "
        "or tell the user, then try again"
    ),
    errno.EFBIG: "the file is larger than the filesystem allows; write a smaller file",
    errno.EROFS: "the workspace is on a read-only filesystem; it cannot be changed",
    errno.EACCES: "the host filesystem refused access to this path; use another path",
    errno.EPERM: "the host filesystem does not permit this operation on this path",
    errno.ENOENT: "a file or directory on the path does not exist; check it with workspace_list",
    errno.ENOTDIR: "a part of the path is a file, not a directory; check it with workspace_list",
    errno.EISDIR: "the path is a directory, not a file; use workspace_list",
    errno.EEXIST: "something already exists at this path",
    errno.ENOTEMPTY: "the directory is not empty",
    errno.ELOOP: "the path goes through a link where a directory was expected",
    errno.EMFILE: "too many files are open in this process right now; try again shortly",
    errno.ENFILE: "too many files are open on this host right now; try again shortly",
    errno.EIO: "the host reported an input/output error; try again, or tell the user",
}


def describe_os_error(error: OSError, tool: str = "") -> str:
    """A message for the model: which tool, the errno's name, and the next step."""
    code = error.errno
    name = errno.errorcode.get(code, "EUNKNOWN") if code is not None else "EUNKNOWN"
    detail = os.strerror(code) if code is not None else (error.strerror or "OS error")
    advice = _ADVICE.get(code, "the host filesystem refused it") if code is not None else ""
    prefix = f"{tool} failed: " if tool else ""
    return f"{prefix}{detail} ({name}): {advice}".rstrip(": ")


def tool_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` with every ``OSError`` leaving it as a RetriableError (name and schema kept)."""
    tool = getattr(func, "__name__", "")
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await func(*args, **kwargs)
            except OSError as error:
                raise RetriableError(describe_os_error(error, tool)) from error

        return async_wrapper

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except OSError as error:
            raise RetriableError(describe_os_error(error, tool)) from error

    return wrapper
