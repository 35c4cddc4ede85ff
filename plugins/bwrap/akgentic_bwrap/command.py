"""The bubblewrap command line: what the sandbox sees of the host, and nothing more."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from akgentic.plugin_api import MOUNT_POINT, ResourceLimits

__all__ = ["ENV_RO_BINDS", "SANDBOX_GID", "SANDBOX_UID", "build_etc", "bwrap_args", "find_bwrap"]

#: Extra host paths (colon-separated) bound read-only, e.g. a toolchain in /opt.
ENV_RO_BINDS = "AKGENTIC_BWRAP_RO_BINDS"
#: The unprivileged identity the command runs as.
SANDBOX_UID = 65534
SANDBOX_GID = 65534

# The only parts of /etc a command sees: what the loader, TLS and name lookups need.
# Never all of /etc, never shadow; passwd and group are synthesized.
_ETC = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl/certs",
    "/etc/ca-certificates",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/etc/hosts",
)
_TOP = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def build_etc(directory: Path, *, network: bool) -> Path:
    """Make the sandbox's ``/etc`` in ``directory``: copies of the curated host files.

    One directory bound read-only costs one mount where a bind per file would cost a
    dozen on every run. Links are copied as links; passwd and group are synthesized.
    """
    etc = directory / "etc"
    etc.mkdir()
    wanted = [*_ETC, "/etc/resolv.conf"] if network else list(_ETC)
    for source in wanted:
        target = etc / os.path.relpath(source, "/etc")
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            if os.path.isdir(source) and not os.path.islink(source):
                shutil.copytree(source, target, symlinks=True)
            elif source == "/etc/resolv.conf" or not os.path.islink(source):
                shutil.copyfile(source, target)  # resolv.conf often links into /run
            else:
                os.symlink(os.readlink(source), target)
        except OSError:
            continue  # absent on this host (e.g. no /etc/alternatives): nothing to show
    (etc / "passwd").write_text(
        f"sandbox:x:{SANDBOX_UID}:{SANDBOX_GID}:sandbox:/home/sandbox:/bin/sh\n", "utf-8"
    )
    (etc / "group").write_text(f"sandbox:x:{SANDBOX_GID}:\n", "utf-8")
    return etc


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in _TOP:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _extra_binds(environ: Mapping[str, str]) -> list[str]:
    args: list[str] = []
    for raw in environ.get(ENV_RO_BINDS, "").split(":"):
        path = raw.strip()
        if path and os.path.isabs(path):
            args += ["--ro-bind-try", path, path]
    return args


def bwrap_args(
    bwrap: str,
    tree: Path,
    etc: Path,
    limits: ResourceLimits,
    environ: Mapping[str, str],
) -> list[str]:
    """Everything before ``--chdir``: namespaces, identity, filesystem, tmpfs sizes.

    The user namespace is asked for explicitly: as host root ``--unshare-all`` would
    skip it, and ``--disable-userns`` (no nested namespace to regain capabilities in)
    needs it. The backend hands these options to bubblewrap through ``--args FD``, so
    the host paths in them never show in a command line the sandbox can read.
    """
    args = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid", str(SANDBOX_UID),
        "--gid", str(SANDBOX_GID),
        "--cap-drop", "ALL",
        "--die-with-parent",
        "--new-session",
        "--hostname", "sandbox",
    ]  # fmt: skip
    if limits.network:
        args.append("--share-net")
    args += _system_binds()
    args += ["--ro-bind", str(etc), "/etc"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    size = str(limits.tmp_bytes)
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
    args += ["--perms", "0700", "--size", size, "--tmpfs", "/home/sandbox"]
    args += _extra_binds(environ)  # after the tmpfs mounts, which would hide them
    # bubblewrap binds nosuid,nodev (only --dev-bind keeps devices): a setuid file or a
    # device node made in the tree does nothing inside; the scrub clears them after.
    args += ["--bind", str(tree), MOUNT_POINT]
    # bubblewrap's root is a writable tmpfs: make it read-only so host memory is not
    # a scratch disk outside the tmpfs size limits.
    args += ["--remount-ro", "/"]
    return args


def find_bwrap() -> str | None:
    """The ``bwrap`` executable on PATH, if any."""
    return shutil.which("bwrap")
