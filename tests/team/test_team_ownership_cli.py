"""One owner per team, across real ``akgentic team`` processes on a real SQLite store.

* two ``team resume`` of one team at once, with a busy loop on every core:
  exactly one runs, the other exits non-zero with one line saying who runs it
  (``AKGENTIC_RACE_TRIALS`` trials, 3 by default; ``AKGENTIC_RACE_TRIALS=50
  pytest -k two_resumes`` is the full check). The winner keeps its session open
  until the loser has exited: a session that ended first would have let the team
  go, and the second resume would then rightly run it;
* ``team stop`` from another process asks the owner to stop and waits: never two
  live copies, nothing lost;
* a session whose team stopped under it (idle) accepts no more input, and on
  leaving does not stop the next owner's copy;
* SIGKILL of the owner, then ``team resume``, works at once;
* SIGTERM and SIGHUP stop a team as cleanly as SIGINT;
* an owner whose claim was taken over exits non-zero without writing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from uuid import UUID

import pytest

from akgentic.team import SqliteEventStore, TeamStatus
from akgentic.testing.cards import entry_echo_team_yaml
from akgentic.testing.waiting import poll_until, wait_until

Run = Callable[..., subprocess.CompletedProcess[str]]

CARD = entry_echo_team_yaml("owned-team", "team_test_agents.Echo")
RUNNING = "running; type messages"
BOUND = 90.0


@pytest.fixture
def card_file(tmp_path: Path) -> Path:
    path = tmp_path / "card.yaml"
    path.write_text(CARD)
    return path


@pytest.fixture
def spawn(
    cli_env: dict[str, str], tmp_path: Path
) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start ``akgentic <args>`` with a stdin pipe; every child is killed at the end."""
    children: list[subprocess.Popen[str]] = []

    def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        child = subprocess.Popen(
            [sys.executable, "-m", "akgentic.cli.team_cmd", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**cli_env, **(env or {})},
            cwd=tmp_path,
        )
        children.append(child)
        return child

    yield start
    for child in children:
        if child.poll() is None:
            child.kill()
        # ``with`` (Popen's exit) closes the child's three pipes, then reaps it.
        with child:
            child.wait(timeout=30)


@pytest.fixture
def cpu_load() -> Iterator[None]:
    """A busy-loop process per core while the test runs (stopped by pid afterwards)."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait(timeout=30)


def store(tmp_path: Path) -> SqliteEventStore:
    return SqliteEventStore(tmp_path / "cli.db")


def record(tmp_path: Path, team_id: str) -> tuple[TeamStatus, int, list[int]]:
    """Status, epoch and event sequences of a team, read afresh."""
    with store(tmp_path) as handle:
        process = handle.load_team(UUID(team_id))
        assert process is not None
        return process.status, process.epoch, [e.sequence for e in handle.load_events(process.id)]


def wait_running(child: subprocess.Popen[str]) -> list[str]:
    """Read the child's stderr until it says its team runs; the lines read."""
    assert child.stderr is not None
    seen: list[str] = []
    for line in child.stderr:
        seen.append(line)
        if RUNNING in line:
            return seen
    raise AssertionError(f"the team never ran: {''.join(seen)}")


def first_exit(children: list[subprocess.Popen[str]], timeout: float = BOUND) -> int:
    """Index of the first child to exit (bounded; polls the processes' state)."""
    if not poll_until(lambda: any(child.poll() is not None for child in children), timeout):
        raise AssertionError(f"no child exited within {timeout} s")
    return next(index for index, child in enumerate(children) if child.poll() is not None)


def stopped_team(run_cli: Run, card_file: Path) -> str:
    created = run_cli("team", "create", str(card_file), "--send", "first", "--no-interactive")
    assert created.returncode == 0, created.stderr
    return created.stdout.split()[-1]


def race_once(spawn: Callable[..., subprocess.Popen[str]], team_id: str) -> tuple[str, str]:
    """Two resumes at once; returns (winner's stderr, loser's stderr) after checking both."""
    pair = [spawn("team", "resume", team_id, "--interactive") for _ in range(2)]
    loser_index = first_exit(pair)
    loser, winner = pair[loser_index], pair[1 - loser_index]
    _, loser_err = loser.communicate(timeout=BOUND)
    assert loser.returncode == 1, loser_err
    assert len(loser_err.strip().splitlines()) == 1, loser_err
    assert winner.poll() is None, "both copies ended: none kept the team"
    _, winner_err = winner.communicate("hello from the winner\n", timeout=BOUND)
    assert winner.returncode == 0, winner_err
    return winner_err, loser_err


def test_two_resumes_at_once_run_exactly_one_copy(
    spawn: Callable[..., subprocess.Popen[str]],
    run_cli: Run,
    card_file: Path,
    tmp_path: Path,
    cpu_load: None,
) -> None:
    team_id = stopped_team(run_cli, card_file)
    trials = int(os.environ.get("AKGENTIC_RACE_TRIALS", "3"))
    for _trial in range(trials):
        _, before_epoch, before = record(tmp_path, team_id)
        winner_err, loser_err = race_once(spawn, team_id)
        assert f"team {team_id} is running in process" in loser_err
        assert "Traceback" not in loser_err, loser_err
        assert "Traceback" not in winner_err, winner_err
        assert "events lost" not in loser_err + winner_err
        status, epoch, sequences = record(tmp_path, team_id)
        assert status == TeamStatus.STOPPED
        assert epoch == before_epoch + 1  # one claim: the winner's
        assert sequences == list(range(1, len(sequences) + 1))
        assert len(sequences) > len(before)


def test_a_session_whose_team_stopped_idle_neither_sends_nor_stops_the_next_owner(
    spawn: Callable[..., subprocess.Popen[str]], run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    team_id = stopped_team(run_cli, card_file)
    idle = spawn(
        "team", "resume", team_id, "--interactive", env={"ORCHESTRATOR_TIMEOUT_DELAY": "1"}
    )
    wait_running(idle)

    def let_go() -> bool:
        with store(tmp_path) as handle:
            process = handle.load_team(UUID(team_id))
            free = process is not None and process.status == TeamStatus.STOPPED
            return free and not handle.claim_held(UUID(team_id))

    wait_until(let_go, timeout=BOUND)  # the idle countdown stopped the team
    assert idle.poll() is None  # while its session still reads stdin
    owner = spawn("team", "resume", team_id, "--interactive")
    wait_running(owner)
    _, idle_err = idle.communicate("too late\n", timeout=BOUND)
    assert idle.returncode == 1, idle_err
    assert "Traceback" not in idle_err, idle_err
    late = [line for line in idle_err.splitlines() if "too late" in line or "error" in line]
    assert len(late) == 1 and f"team {team_id} was stopped" in late[0], idle_err
    assert owner.poll() is None, "leaving the idle session stopped the new owner's team"
    _, owner_err = owner.communicate("hello from the owner\n", timeout=BOUND)
    assert owner.returncode == 0, owner_err
    with store(tmp_path) as handle:
        texts = [
            getattr(getattr(e.event, "message", None), "content", None)
            for e in handle.load_events(UUID(team_id))
        ]
    assert "hello from the owner" in texts and "too late" not in texts


def test_team_stop_from_another_process_asks_the_owner_and_never_leaves_two_copies(
    spawn: Callable[..., subprocess.Popen[str]], run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    team_id = stopped_team(run_cli, card_file)
    owner = spawn("team", "resume", team_id, "--interactive")
    wait_running(owner)
    assert owner.stdin is not None
    owner.stdin.write("before the stop\n")
    owner.stdin.flush()
    stopped = run_cli("team", "stop", team_id, timeout=BOUND)
    assert stopped.returncode == 0, stopped.stderr
    owner.wait(timeout=BOUND)  # the stop returned only once the owner let the team go
    assert owner.returncode == 0
    status, _, sequences = record(tmp_path, team_id)
    assert status == TeamStatus.STOPPED
    with store(tmp_path) as handle:
        texts = [
            getattr(getattr(e.event, "message", None), "content", None)
            for e in handle.load_events(UUID(team_id))
        ]
    assert "before the stop" in texts
    again = run_cli("team", "resume", team_id, "--send", "after", "--no-interactive")
    assert again.returncode == 0, again.stderr
    assert record(tmp_path, team_id)[2][: len(sequences)] == sequences


def test_resume_right_after_the_owner_was_killed_works_at_once(
    spawn: Callable[..., subprocess.Popen[str]], run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    team_id = stopped_team(run_cli, card_file)
    owner = spawn("team", "resume", team_id, "--interactive")
    wait_running(owner)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait(timeout=BOUND)
    assert record(tmp_path, team_id)[0] == TeamStatus.RUNNING  # as the dead owner left it
    resumed = run_cli("team", "resume", team_id, "--send", "after the crash", "--no-interactive")
    assert resumed.returncode == 0, resumed.stderr
    status, _, sequences = record(tmp_path, team_id)
    assert status == TeamStatus.STOPPED
    assert sequences == list(range(1, len(sequences) + 1))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_sigterm_and_sighup_stop_a_team_as_cleanly_as_sigint(
    spawn: Callable[..., subprocess.Popen[str]],
    card_file: Path,
    tmp_path: Path,
    signum: signal.Signals,
) -> None:
    owner = spawn("team", "create", str(card_file), "--interactive")
    wait_running(owner)
    assert owner.stdin is not None
    owner.stdin.write("last words\n")
    owner.stdin.flush()
    os.kill(owner.pid, signum)
    out, err = owner.communicate(timeout=BOUND)
    assert owner.returncode == 0, err
    assert "Traceback" not in err
    team_id = out.split()[-1]
    status, _, sequences = record(tmp_path, team_id)
    assert status == TeamStatus.STOPPED
    assert sequences == list(range(1, len(sequences) + 1))
    with store(tmp_path) as handle:
        assert not handle.claim_held(UUID(team_id))


def test_an_owner_whose_claim_was_taken_over_exits_non_zero_without_writing(
    spawn: Callable[..., subprocess.Popen[str]], run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    team_id = stopped_team(run_cli, card_file)
    owner = spawn("team", "resume", team_id, "--interactive")
    wait_running(owner)
    # Lose the owner's hold behind its back (as a deleted lock file or a lost session does).
    (tmp_path / "cli.db.owners" / f"{team_id}.lock").unlink()
    stopped = run_cli("team", "stop", team_id, timeout=BOUND)
    assert stopped.returncode == 0, stopped.stderr
    fenced = record(tmp_path, team_id)
    assert fenced[0] == TeamStatus.STOPPED
    _, err = owner.communicate("too late\n", timeout=BOUND)
    assert owner.returncode == 1, err
    assert "Traceback" not in err
    assert f"team {team_id} was claimed by another process" in err
    assert record(tmp_path, team_id) == fenced
