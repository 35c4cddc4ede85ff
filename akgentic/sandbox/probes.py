"""Escape probes: hostile commands a sandbox backend must contain.

Each probe runs one hostile command in a fresh tree, under tight limits, and then
checks the host side (files, listeners, processes) as well as what the command
reported. ``akgentic sandbox check`` prints their outcomes;
:class:`akgentic.testing.SandboxBackendContract` asserts them. The limits are small
on purpose so a probe stays harmless on a small shared machine.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from akgentic.sandbox.backend import SandboxBackend
from akgentic.sandbox.models import TIMEOUT_EXIT_CODE, ExecResult, ResourceLimits

__all__ = [
    "PROBES",
    "PROBE_LIMITS",
    "Probe",
    "ProbeContext",
    "ProbeOutcome",
    "marked_processes",
    "run_probe",
    "run_probes",
]

_MIB = 1024**2
# The command must end within its budget + 2 s (``duration_s``, from its start); the
# caller's wall clock also counts setup (a container's creation), on a host that may be
# busy, so it gets more room before a probe calls the run hung.
_SLACK_S = 15.0

#: Limits every probe runs under: tight, so a fork bomb or a disk filler stays small.
PROBE_LIMITS = ResourceLimits(
    cpu_s=10,
    memory_bytes=512 * _MIB,
    max_processes=48,
    max_file_bytes=8 * _MIB,
    max_open_files=256,
    output_bytes=1 * _MIB,
    tmp_bytes=16 * _MIB,
)


@dataclass
class ProbeOutcome:
    """What one probe found: ``contained`` is the verdict, ``detail`` says why."""

    name: str
    contained: bool
    detail: str
    result: ExecResult | None = None


@dataclass
class ProbeContext:
    """A prepared backend on a fresh tree, and host-side canaries for one probe."""

    backend: SandboxBackend
    tree: Path
    token: str
    limits: ResourceLimits
    host_dir: Path
    env_canary: tuple[str, str]
    notes: list[str] = field(default_factory=list)

    def run(self, argv: Sequence[str], timeout_s: float, cwd: str = "") -> ExecResult:
        """Run ``argv`` in the sandbox (relative ``cwd``)."""
        return self.backend.run(argv, cwd=cwd, env={}, timeout_s=timeout_s)

    def sh(self, script: str, timeout_s: float = 10.0) -> ExecResult:
        """Run a POSIX shell script (written into the tree so its name marks its processes)."""
        path = self.tree / f"probe-{self.token}.sh"
        path.write_text(script, "utf-8")
        return self.run(["sh", path.name], timeout_s)  # cwd is the tree root


@dataclass(frozen=True)
class Probe:
    """One hostile behaviour, in plain words, and the check that it is contained."""

    name: str
    threat: str
    check: Callable[[ProbeContext], ProbeOutcome]


def marked_processes(token: str) -> list[int]:
    """Host processes whose command line contains ``token``."""
    found = []
    needle = token.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if needle in handle.read():
                    found.append(int(entry))
        except OSError:
            continue  # the process ended while we looked
    return found


def _wait_no_marked(token: str, within_s: float = 3.0) -> list[int]:
    deadline = time.monotonic() + within_s
    while True:
        left = marked_processes(token)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def _outcome(name: str, problems: list[str], result: ExecResult | None, ok: str) -> ProbeOutcome:
    if problems:
        return ProbeOutcome(name, False, "; ".join(problems), result)
    return ProbeOutcome(name, True, ok, result)


# -- the probes ---------------------------------------------------------------
def _write_outside(ctx: ProbeContext) -> ProbeOutcome:
    name = f"akg-probe-{ctx.token}"
    home = Path.home()
    inside = ["/etc", "/usr", "/", str(home), "/workspace/..", "/var/tmp"]
    script = "".join(f"(echo x > '{d}/{name}') 2>/dev/null && echo WROTE '{d}'\n" for d in inside)
    script += f'echo x > "$TMPDIR/{name}" && echo TMP-OK\nexit 0\n'
    result = ctx.sh(script)
    problems = [line for line in result.stdout.splitlines() if line.startswith("WROTE")]
    for host in (Path("/etc"), Path("/usr"), Path("/"), home, ctx.tree.parent, Path("/var/tmp")):
        if (host / name).exists():
            problems.append(f"{host / name} appeared on the host")
            (host / name).unlink()
    if (Path(tempfile.gettempdir()) / name).exists():
        problems.append("a file in the sandbox temp dir appeared in the host temp dir")
    return _outcome("write-outside", problems, result, "only the tree and private tmp are writable")


def _read_secrets(ctx: ProbeContext) -> ProbeOutcome:
    secret = uuid.uuid4().hex
    canary = ctx.host_dir / f"canary-{ctx.token}.txt"
    canary.write_text(secret, "utf-8")
    home_canary = Path.home() / f".akgentic-probe-{ctx.token}"
    home_secret = uuid.uuid4().hex
    try:
        home_canary.write_text(home_secret, "utf-8")
    except OSError:
        home_canary = canary
    env_key, env_value = ctx.env_canary
    os.environ[env_key] = env_value
    try:
        result = ctx.sh(
            "cat /etc/shadow 2>&1\n"
            f"cat '/workspace/../{canary.name}' '{canary}' 2>&1\n"
            f"cat '{home_canary}' 2>&1\nls -a '{Path.home()}' 2>&1\nenv\nexit 0\n"
        )
    finally:
        os.environ.pop(env_key, None)
        if home_canary != canary:
            home_canary.unlink(missing_ok=True)
    seen = result.stdout + result.stderr
    problems = []
    if secret in seen:
        problems.append("a host file outside the tree was read")
    if home_secret in seen:
        problems.append("a file in the host home was read")
    if env_value in seen:
        problems.append("a host environment variable leaked in")
    shadow = _shadow_sample()
    if shadow and shadow in seen:
        problems.append("/etc/shadow was read")
    return _outcome("read-secrets", problems, result, "shadow, host files and host env unreadable")


def _shadow_sample() -> str | None:
    try:
        first = Path("/etc/shadow").read_text("utf-8").splitlines()[0]
    except (OSError, IndexError):
        return None
    return first if len(first) > 8 else None


@contextmanager
def _listener() -> Iterator[tuple[int, list[str]]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    accepted: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, peer = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(str(peer))
            conn.close()

    thread = threading.Thread(target=accept, name="probe-listener", daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join(2)
        server.close()


def _network(ctx: ProbeContext) -> ProbeOutcome:
    with _listener() as (port, accepted):
        result = ctx.sh(
            f"for port in 5432 {port}; do\n"
            "  if command -v python3 >/dev/null 2>&1; then\n"
            "    python3 -c \"import socket,sys; s=socket.create_connection(('127.0.0.1', "
            'int(sys.argv[1])), 2); print(\'CONNECTED\', sys.argv[1])" "$port" 2>/dev/null\n'
            "  else\n"
            '    nc -w 2 127.0.0.1 "$port" </dev/null >/dev/null 2>&1 && echo CONNECTED "$port"\n'
            "  fi\n"
            "done\n"
            "if command -v python3 >/dev/null 2>&1; then\n"
            "  python3 -c \"import socket; socket.getaddrinfo('example.com', 80);"
            " print('RESOLVED')\" 2>/dev/null\n"
            "else\n"
            "  nslookup example.com >/dev/null 2>&1 && echo RESOLVED\n"
            "fi\n"
            "cat /proc/net/dev\nexit 0\n",
            timeout_s=15,
        )
    problems = [
        line for line in result.stdout.splitlines() if line.startswith(("CONNECTED", "RESOLVED"))
    ]
    if accepted:
        problems.append(f"the host listener on 127.0.0.1:{port} accepted a connection")
    interfaces = [
        line.split(":", 1)[0].strip() for line in result.stdout.splitlines() if ":" in line
    ]
    interfaces = [i for i in interfaces if i and " " not in i and "|" not in i]
    if any(i != "lo" for i in interfaces):
        problems.append(f"network interfaces besides lo: {interfaces}")
    if not interfaces and "Inter-" not in result.stdout:
        problems.append("could not list the interfaces (/proc/net/dev unreadable)")
    return _outcome("network", problems, result, "no host services, no DNS; only lo")


def _remount(ctx: ProbeContext) -> ProbeOutcome:
    result = ctx.sh(
        "mount -o remount,rw /usr 2>/dev/null && echo REMOUNTED /usr\n"
        "mount -o remount,rw / 2>/dev/null && echo REMOUNTED /\n"
        f"(echo x > /usr/akg-probe-{ctx.token}) 2>/dev/null && echo WROTE /usr\n"
        "grep -E '^(CapEff|NoNewPrivs):' /proc/self/status\nexit 0\n"
    )
    problems = [
        line for line in result.stdout.splitlines() if line.startswith(("REMOUNTED", "WROTE"))
    ]
    status = dict(
        (k.strip(), v.strip())
        for k, _, v in (line.partition(":") for line in result.stdout.splitlines())
        if k.strip() in ("CapEff", "NoNewPrivs")
    )
    if status.get("CapEff", "x").strip("0"):
        problems.append(f"effective capabilities: {status.get('CapEff', 'unknown')}")
    if status.get("NoNewPrivs") != "1":
        problems.append(f"NoNewPrivs is {status.get('NoNewPrivs', 'unknown')}, not 1")
    if Path(f"/usr/akg-probe-{ctx.token}").exists():
        problems.append("a file appeared in the host /usr")
    return _outcome("remount", problems, result, "no capabilities; read-only binds stay read-only")


def _fork_bomb(ctx: ProbeContext) -> ProbeOutcome:
    if getattr(ctx.backend, "bounds_processes", True) is False:
        return ProbeOutcome(
            "fork-bomb", False, "this backend cannot bound processes on this host: not run"
        )
    budget = 3.0
    begin = time.monotonic()
    result = ctx.sh("bomb() { bomb | bomb & }\nbomb\nwait\n", timeout_s=budget)
    elapsed = time.monotonic() - begin
    problems = []
    if result.duration_s > budget + 2 or elapsed > budget + _SLACK_S:
        problems.append(f"took {elapsed:.1f}s for a {budget:.0f}s budget")
    left = _wait_no_marked(ctx.token)
    if left:
        problems.append(f"{len(left)} process(es) survived on the host")
    return _outcome(
        "fork-bomb", problems, result, f"bounded by the process limit, gone after {elapsed:.1f}s"
    )


def _fill_disk(ctx: ProbeContext) -> ProbeOutcome:
    cap = ctx.limits.max_file_bytes
    count = cap // _MIB * 4
    target = f"fill-{ctx.token}"
    result = ctx.sh(
        f"dd if=/dev/zero of=/workspace/{target} bs=1048576 count={count} 2>&1"
        " && echo FILLED tree\n"
        f"dd if=/dev/zero of=/tmp/{target} bs=1048576 count={count} 2>&1 && echo FILLED tmp\n"
        "exit 0\n",
        timeout_s=15,
    )
    problems = [line for line in result.stdout.splitlines() if line.startswith("FILLED")]
    host_file = ctx.tree / target
    size = host_file.stat().st_size if host_file.exists() else 0
    if size > cap:
        problems.append(f"a {size}-byte file was written over the {cap}-byte limit")
    return _outcome("fill-disk", problems, result, f"files stop at {cap} bytes, tmp at its size")


def _flood(ctx: ProbeContext) -> ProbeOutcome:
    size = 100 * _MIB
    begin = time.monotonic()
    result = ctx.sh(f"yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c {size}\nexit 0\n", 60)
    elapsed = time.monotonic() - begin
    problems = []
    limit = ctx.limits.output_bytes
    if result.timed_out:
        problems.append("the flood did not finish (blocked?)")
    if not result.stdout_truncated:
        problems.append("stdout not reported truncated")
    if len(result.stdout.encode()) > limit:
        problems.append(f"kept {len(result.stdout)} chars, over the {limit}-byte limit")
    return _outcome(
        "flood-100MB", problems, result, f"kept {limit} bytes of 100 MB in {elapsed:.1f}s"
    )


def _tree_entries(tree: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Every entry under ``tree`` with its own (not followed) status."""
    for root, dirs, files in os.walk(tree):
        for name in (*dirs, *files):
            path = Path(root) / name
            try:
                yield path, path.lstat()
            except OSError:
                continue  # removed while we looked


def _setuid(ctx: ProbeContext) -> ProbeOutcome:
    name = f"suid-{ctx.token}"
    result = ctx.sh(
        f"cp /bin/sh {name} && chmod 6755 {name} && ls -ln {name}\n"
        f"mkdir sgid-{ctx.token} && chmod 2775 sgid-{ctx.token}\n"
        f"touch plain-{ctx.token} && chmod 4755 plain-{ctx.token}\n"
        "id -u\nexit 0\n"
    )
    problems = []
    for path, info in _tree_entries(ctx.tree):
        if info.st_mode & (stat.S_ISUID | stat.S_ISGID):
            bits = "setuid" if info.st_mode & stat.S_ISUID else "setgid"
            problems.append(
                f"{path.relative_to(ctx.tree)} kept its {bits} bit on the host"
                f" (owner uid {info.st_uid})"
            )
    return _outcome("setuid", problems, result, "no setuid/setgid bit survives on the host")


def _devices(ctx: ProbeContext) -> ProbeOutcome:
    result = ctx.sh(
        f"mknod null-{ctx.token} c 1 3 2>&1 && echo MADE char\n"
        f"mknod loop-{ctx.token} b 7 0 2>&1 && echo MADE block\n"
        f"mkfifo fifo-{ctx.token} 2>&1\nexit 0\n"
    )
    problems = []
    for path, info in _tree_entries(ctx.tree):
        if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
            problems.append(f"device node {path.relative_to(ctx.tree)} is on the host")
    return _outcome("devices", problems, result, "no device node reaches the host tree")


def _host_paths(ctx: ProbeContext) -> ProbeOutcome:
    result = ctx.sh(
        "for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do\n"
        '  cat "$f" 2>/dev/null; echo\ndone\n'
        'for f in /proc/[0-9]*/cwd /proc/[0-9]*/root; do readlink "$f" 2>/dev/null; done\n'
        "exit 0\n"
    )
    seen = result.stdout.replace("\x00", " ")
    problems = []
    if f"probe-{ctx.token}.sh" not in seen:
        problems.append("could not read its own /proc/PID/cmdline (the probe proved nothing)")
    for host in sorted({str(ctx.tree), str(ctx.host_dir), str(ctx.tree.resolve())}):
        if host in seen:
            problems.append(f"the host path {host} is visible inside")
    return _outcome(
        "host-paths", problems, result, "no host path in /proc/*/cmdline, environ, cwd or root"
    )


_HANG = """trap '' TERM HUP INT
if [ "$1" = child ]; then while :; do sleep 1; done; fi
sh "$0" child &
setsid sh "$0" child &
( sh "$0" child & ) &
echo started
while :; do sleep 1; done
"""


def _ignore_sigterm(ctx: ProbeContext) -> ProbeOutcome:
    budget = 1.0
    begin = time.monotonic()
    result = ctx.sh(_HANG, timeout_s=budget)
    elapsed = time.monotonic() - begin
    problems = []
    if not result.timed_out or result.exit_code != TIMEOUT_EXIT_CODE:
        problems.append(f"not reported as a timeout (exit {result.exit_code})")
    if result.duration_s > budget + 2 or elapsed > budget + _SLACK_S:
        problems.append(f"returned after {elapsed:.1f}s for a {budget:.0f}s budget")
    if "started" not in result.stdout:
        problems.append("partial output was lost")
    left = _wait_no_marked(ctx.token)
    if left:
        problems.append(f"{len(left)} process(es) survived on the host")
    return _outcome(
        "ignore-sigterm", problems, result, "timed out with 124, partial output, no survivor"
    )


#: Every probe, in the order ``akgentic sandbox check`` prints them.
PROBES: tuple[Probe, ...] = (
    Probe("write-outside", "write to /etc, /usr, the host home, beside the tree", _write_outside),
    Probe("read-secrets", "read /etc/shadow, host files, the host home, host env", _read_secrets),
    Probe("network", "connect to 127.0.0.1:5432 and a host listener; DNS", _network),
    Probe("remount", "remount a read-only path writable; hold capabilities", _remount),
    Probe("fork-bomb", "fork without bound", _fork_bomb),
    Probe("fill-disk", "write files until the disk is full", _fill_disk),
    Probe("flood-100MB", "print 100 MB on stdout", _flood),
    Probe("ignore-sigterm", "ignore SIGTERM, fork and setsid away, overrun", _ignore_sigterm),
    Probe("setuid", "chmod 6755 a copy of a shell, for any host user to run", _setuid),
    Probe("devices", "mknod a character and a block device in the tree", _devices),
    Probe("host-paths", "find the tree's host path in /proc/*/cmdline, environ", _host_paths),
)


def run_probe(probe: Probe, factory: Callable[[], SandboxBackend]) -> ProbeOutcome:
    """Run ``probe`` on a fresh backend and tree; always cleans up after itself."""
    token = uuid.uuid4().hex[:12]
    host_dir = Path(tempfile.mkdtemp(prefix="akgentic-probe-"))
    tree = host_dir / "tree"
    tree.mkdir()
    backend = factory()
    try:
        backend.prepare(tree, limits=PROBE_LIMITS, timeout_s=60)
        ctx = ProbeContext(
            backend,
            tree,
            token,
            PROBE_LIMITS,
            host_dir,
            (f"AKGENTIC_PROBE_{token}", uuid.uuid4().hex),
        )
        outcome = probe.check(ctx)
    except Exception as exc:  # a probe that could not run is reported, never hidden
        outcome = ProbeOutcome(probe.name, False, f"could not run: {type(exc).__name__}: {exc}")
    finally:
        backend.close()
        left = _wait_no_marked(token)
        shutil.rmtree(host_dir, ignore_errors=True)
    if left and outcome.contained:
        outcome = ProbeOutcome(probe.name, False, f"{len(left)} process(es) left behind")
    return outcome


def run_probes(
    factory: Callable[[], SandboxBackend], names: Sequence[str] | None = None
) -> list[ProbeOutcome]:
    """Run every probe (or those named) on fresh backends from ``factory``."""
    chosen = [p for p in PROBES if names is None or p.name in names]
    return [run_probe(probe, factory) for probe in chosen]
