"""Whether bubblewrap can sandbox commands on this host, and why not."""

from __future__ import annotations

import functools
import shutil
import subprocess

from akgentic_bwrap.command import SANDBOX_GID, SANDBOX_UID, find_bwrap

__all__ = ["INSTALL_HINT", "bwrap_unavailable_reason"]

INSTALL_HINT = "apt install bubblewrap (Debian/Ubuntu; the package is 'bubblewrap')"


@functools.lru_cache(maxsize=8)
def _probe(bwrap: str, true: str) -> str | None:
    args = [
        bwrap, "--unshare-all", "--unshare-user", "--disable-userns",
        "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID),
        "--cap-drop", "ALL", "--die-with-parent", "--new-session",
        "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", true,
    ]  # fmt: skip
    try:
        done = subprocess.run(args, capture_output=True, timeout=10, env={}, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap could not be started: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        return (
            f"bwrap cannot create its namespaces here ({detail}); unprivileged user "
            "namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1, "
            "user.max_user_namespaces > 0) or a container forbids them"
        )
    return None


def bwrap_unavailable_reason() -> str | None:
    """``None`` when bubblewrap works here, else the reason (never raises)."""
    bwrap = find_bwrap()
    if bwrap is None:
        return f"bwrap is not on PATH; install it: {INSTALL_HINT}"
    true = shutil.which("true") or "/bin/true"
    return _probe(bwrap, true)
