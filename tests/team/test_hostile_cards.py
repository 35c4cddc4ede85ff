"""Hostile and wrong team cards: refused cheaply, all problems at once, exit 2, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from akgentic.team import TeamCard, load_team_card
from akgentic.team.card_yaml import MAX_CARD_BYTES, TeamCardValidationError, parse_team_card
from akgentic.team.yaml_aliases import ALIAS_NODE_BUDGET, alias_overrun
from akgentic.testing.cards import entry_echo_team_yaml

Run = Callable[..., subprocess.CompletedProcess[str]]

HEAD = """\
name: hostile
entry_point:
  card:
    agent_class: team_test_agents.Echo
    description: entry
    config: {name: "@Entry", role: Entry}
members:
  - card:
      agent_class: akgentic.agent.BaseAgent
      description: victim
      config:
        name: "@Victim"
        role: Victim
        prompt:
          template: hello
          params:
"""


def _level(name: str, previous: str | None) -> str:
    item = f"*{previous}" if previous else "x"
    return f"            {name}: &{name} [{', '.join([item] * 9)}]\n"


#: Nine levels of nine aliases: under 1 KB of text, 9**9 (387 million) leaves expanded.
BOMB = HEAD + "".join(
    _level(name, previous) for previous, name in zip([None, *"abcdefgh"], "abcdefghi", strict=True)
)


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(BOMB.splitlines(), 1) if text in line)


ECHO_CARD = entry_echo_team_yaml("plain", "team_test_agents.Echo")

#: Runs in a child: loads the card given on argv, counting the YAML parser's events
#: (each ``yaml.parse`` stream is wrapped in a counter that yields the real events),
#: and reports the peak RSS. Its speed is measured by ``bench/cards.py``.
_MEASURE = """\
import json, re, sys
import yaml
from akgentic.team.card_yaml import TeamCardValidationError, load_team_card
import akgentic.agent  # the card's classes

events = 0
real_parse = yaml.parse

def counting(*args, **kwargs):
    global events
    for event in real_parse(*args, **kwargs):
        events += 1
        yield event

yaml.parse = counting
try:
    load_team_card(sys.argv[1])
    problems = []
except TeamCardValidationError as exc:
    problems = [str(p) for p in exc.problems]
# VmHWM: the peak RSS of this program since exec (ru_maxrss would also count the
# forked parent's pages, inherited until exec).
status = open("/proc/self/status").read()
peak_kb = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
print(json.dumps({"events": events, "peak_mb": peak_kb / 1024, "problems": problems}))
"""


def _limit_memory() -> None:  # pragma: no cover - runs in the child before exec
    import resource

    # Keeps the machine safe if the bound ever breaks: the child fails instead of swapping.
    resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024, 1536 * 1024 * 1024))


def test_the_alias_bomb_card_is_under_a_kilobyte(tmp_path: Path) -> None:
    assert len(BOMB.encode()) < 1024
    assert BOMB.count("*h") == 9


def test_an_alias_bomb_card_is_refused_within_one_parse_using_under_100_mb(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    card = tmp_path / "bomb.yaml"
    card.write_text(BOMB)
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(card)],
        capture_output=True,
        text=True,
        env=cli_env,
        timeout=120,
        preexec_fn=_limit_memory,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    # The refusal reads the parser's event stream once, stopping at the alias that
    # goes over the budget (fewer events than one pass over the whole text), and
    # expands nothing: the peak memory of a process that never built 387 million nodes.
    one_pass = sum(1 for _ in yaml.parse(BOMB))
    assert 0 < report["events"] < one_pass, (report["events"], one_pass)
    assert report["peak_mb"] < 100
    [problem] = report["problems"]
    assert problem.startswith(f"line {_line_of('e: &e')}: column ")
    assert f"past {ALIAS_NODE_BUDGET} nodes repeated through aliases" in problem


def test_team_create_refuses_an_alias_bomb_with_exit_2_naming_the_line(
    run_cli: Run, tmp_path: Path
) -> None:
    card = tmp_path / "bomb.yaml"
    card.write_text(BOMB)
    result = run_cli("team", "create", str(card), "--no-interactive", timeout=120)
    assert result.returncode == 2, result.stderr
    assert f"line {_line_of('e: &e')}" in result.stderr and "alias *d" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "cli.db").exists()


def test_a_recursive_alias_is_refused_with_its_line() -> None:
    text = HEAD + "            loop: &loop [1, *loop]\n"
    with pytest.raises(TeamCardValidationError) as caught:
        parse_team_card(text, "loop.yaml")
    [problem] = caught.value.problems
    assert problem.line == len(HEAD.splitlines()) + 1
    assert "recursive" in problem.message


def test_a_few_aliases_within_the_budget_still_load() -> None:
    text = HEAD + "            tone: &tone calm and short\n            again: *tone\n"
    card = parse_team_card(text)
    params = card.members[0].card.config.prompt.params  # type: ignore[attr-defined]
    assert params["again"] == "calm and short"


def test_the_budget_counts_nodes_repeated_through_aliases_only() -> None:
    import yaml

    many = "[" + ", ".join(str(i) for i in range(3 * ALIAS_NODE_BUDGET)) + "]"
    assert alias_overrun(many, yaml.SafeLoader) is None
    doubled = f"a: &a {many}\nb: *a\n"
    overrun = alias_overrun(doubled, yaml.SafeLoader)
    assert overrun is not None and overrun.line == 2


def test_a_card_file_that_is_not_utf8_is_a_validation_error_with_its_line(
    tmp_path: Path,
) -> None:
    card = tmp_path / "latin1.yaml"
    card.write_bytes(
        ECHO_CARD.replace("description: echo", "description: caf\xe9").encode("latin-1")
    )
    with pytest.raises(TeamCardValidationError) as caught:
        load_team_card(card)
    [problem] = caught.value.problems
    assert problem.line == 10
    assert "not UTF-8" in problem.message and "0xe9" in problem.message
    with pytest.raises(TeamCardValidationError):
        TeamCard.from_file(card)


def test_team_create_on_a_non_utf8_card_exits_2_without_a_traceback(
    run_cli: Run, tmp_path: Path
) -> None:
    card = tmp_path / "latin1.yaml"
    card.write_bytes(
        ECHO_CARD.replace("description: echo", "description: caf\xe9").encode("latin-1")
    )
    result = run_cli("team", "create", str(card), "--no-interactive")
    assert result.returncode == 2, result.stderr
    assert "line 10" in result.stderr and "not UTF-8" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_message_class_as_agent_class_is_refused_at_its_location() -> None:
    text = ECHO_CARD.replace(
        "agent_class: team_test_agents.Echo\n      description: echo",
        "agent_class: akgentic.core.messages.message.UserMessage\n      description: echo",
    )
    with pytest.raises(TeamCardValidationError) as caught:
        parse_team_card(text)
    [problem] = caught.value.problems
    assert (problem.location, problem.line) == ("members[0].card", 9)
    assert "UserMessage is not an actor class" in problem.message


def test_a_metadata_type_that_is_not_team_metadata_is_refused_at_its_line() -> None:
    text = ECHO_CARD + "metadata_type: akgentic.core.messages.message.UserMessage\n"
    with pytest.raises(TeamCardValidationError) as caught:
        parse_team_card(text)
    [problem] = caught.value.problems
    assert (problem.location, problem.line) == ("metadata_type", 13)
    assert "is not a TeamMetadata subclass" in problem.message


def test_the_cli_refuses_wrong_classes_with_exit_2_and_the_location(
    run_cli: Run, tmp_path: Path
) -> None:
    card = tmp_path / "wrong.yaml"
    card.write_text(
        ECHO_CARD.replace(
            "team_test_agents.Echo\n      description: echo",
            "builtins.dict\n      description: echo",
        )
        + "metadata_type: team_test_agents.Echo\n"
    )
    result = run_cli("team", "create", str(card), "--no-interactive")
    assert result.returncode == 2, result.stderr
    assert (
        "line 9: members[0].card: agent class builtins.dict is not an actor class" in result.stderr
    )
    assert "line 13: metadata_type: metadata type team_test_agents.Echo is not a TeamMetadata" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr


def test_metadata_for_a_card_without_metadata_type_exits_2_naming_the_option(
    run_cli: Run, tmp_path: Path
) -> None:
    card = tmp_path / "plain.yaml"
    card.write_text(ECHO_CARD)
    result = run_cli("team", "create", str(card), "--metadata", "tenant=acme", "--no-interactive")
    assert result.returncode == 2, result.stderr
    assert "--metadata tenant" in result.stderr and "declares no metadata_type" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "cli.db").exists()


def test_metadata_that_fails_the_metadata_type_exits_2_naming_the_key(
    run_cli: Run, tmp_path: Path
) -> None:
    card = tmp_path / "typed.yaml"
    card.write_text(ECHO_CARD + "metadata_type: team_test_agents.CaseMetadata\n")
    result = run_cli("team", "create", str(card), "--metadata", "nosuch=1", "--no-interactive")
    assert result.returncode == 2, result.stderr
    assert "--metadata nosuch: Extra inputs are not permitted" in result.stderr
    assert "Traceback" not in result.stderr


def test_validation_reports_naming_problems_together_with_field_problems() -> None:
    text = textwrap.dedent(
        """\
        entry_point:
          card:
            agent_class: team_test_agents.Echo
            description: entry
            config: {name: "@Entry", role: Entry}
        members:
          - card:
              agent_class: team_test_agents.Echo
              description: first
              config: {name: "@Twin", role: Twin}
          - card:
              agent_class: team_test_agents.Echo
              description: second
              config: {name: "@Twin", role: Twin}
          - card:
              agent_class: team_test_agents.Echo
              description: third
              config: {name: "@Pool", role: Pool}
            headcount: 2
          - card:
              agent_class: team_test_agents.Echo
              description: fourth
              config: {name: "@Pool_1", role: Pool}
            head_count: 3
        """
    )
    with pytest.raises(TeamCardValidationError) as caught:
        parse_team_card(text)
    found = {(p.location, p.line): p.message for p in caught.value.problems}
    assert "Extra inputs are not permitted" in found[("members[3].head_count", 24)]
    assert "duplicate agent name '@Twin'" in found[("members[1].card.config.name", 14)]
    assert "'@Pool_1' would be spawned twice" in found[("members[3].card.config.name", 23)]
    assert len(found) == 3


def test_a_card_whose_only_problems_are_names_lists_each_with_its_line() -> None:
    extra = (
        "  - card: {agent_class: team_test_agents.Echo, description: x,"
        " config: {name: '', role: X}}\n"
    )
    text = ECHO_CARD.replace('name: "@Echo"', 'name: "@Entry"').replace(
        "message_types:", extra + "message_types:"
    )
    with pytest.raises(TeamCardValidationError) as caught:
        parse_team_card(text)
    found = sorted((p.line, p.location) for p in caught.value.problems)
    assert found == [(11, "members[0].card.config.name"), (12, "members[1].card.config.name")]


MANY_PROBLEMS = """\
entry_point:
  card:
    agent_class: akgentic.agent.HumanProxy
    description: entry
    config: {name: "@Human", role: Human}
members:
  - card:
      agent_class: no.such.Agent
      description: a
      config: {name: "@A", role: A}
  - card:
      agent_class: akgentic.agent.BaseAgent
      description: b
      config: {name: "@B", role: B, colour: red}
  - card:
      agent_class: akgentic.agent.BaseAgent
      description: c
      config: {name: "@B", role: C}
    headcount: 0
message_types: [nowhere.Msg]
metadata_type: akgentic.agent.BaseAgent
welcome: hi
"""


def test_team_create_reports_every_kind_of_problem_in_one_run_in_file_order(
    run_cli: Run, tmp_path: Path
) -> None:
    card = tmp_path / "many.yaml"
    card.write_text(MANY_PROBLEMS)
    result = run_cli("team", "create", str(card), "--no-interactive")
    assert result.returncode == 2, result.stderr
    lines = [line.strip() for line in result.stderr.splitlines()[1:]]
    where = [line.split(": ", 2)[:2] for line in lines]
    assert where == [
        ["line 8", "members[0].card"],
        ["line 14", "members[1].card.config.colour"],
        ["line 18", "members[2].card.config.name"],
        ["line 19", "members[2].headcount"],
        ["line 20", "message_types"],
        ["line 21", "metadata_type"],
        ["line 22", "welcome"],
    ]
    assert "duplicate agent name '@B'" in lines[2]
    assert not (tmp_path / "cli.db").exists()


def _bytes_read() -> int:
    """Bytes this process has read through read(2) and friends so far (Linux)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def _sparse_card(tmp_path: Path, size: int) -> Path:
    card = tmp_path / "huge.yaml"
    with card.open("wb") as stream:
        stream.write(ECHO_CARD.encode())
        stream.truncate(size)  # a hole: nothing past the card is written to disk
    return card


def test_a_card_file_over_the_cap_is_refused_from_its_size_without_being_read(
    tmp_path: Path,
) -> None:
    card = _sparse_card(tmp_path, 200 * 1024 * 1024)
    before = _bytes_read()
    with pytest.raises(TeamCardValidationError) as caught:
        load_team_card(card)
    read = _bytes_read() - before
    [problem] = caught.value.problems
    assert str(200 * 1024 * 1024) in problem.message and str(MAX_CARD_BYTES) in problem.message
    # Not one byte of the card's content was read (the bound leaves room for
    # whatever else the process reads meanwhile, far below the card's size).
    assert read < 1024 * 1024, read


def test_a_card_just_under_the_cap_is_still_read(tmp_path: Path) -> None:
    card = tmp_path / "padded.yaml"
    padding = "#" + "x" * 99 + "\n"
    body = ECHO_CARD + padding * ((MAX_CARD_BYTES - len(ECHO_CARD)) // len(padding))
    card.write_text(body)
    assert card.stat().st_size <= MAX_CARD_BYTES
    assert load_team_card(card).name


def test_a_pipe_is_read_no_further_than_the_cap(tmp_path: Path) -> None:
    fifo = tmp_path / "card.fifo"
    os.mkfifo(fifo)
    chunk = b"#" + b"x" * 65534 + b"\n"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "out = open(sys.argv[1], 'wb')\n"
            "try:\n"
            "    while True:\n"
            "        out.write(sys.argv[2].encode() * 64)\n"
            "except BrokenPipeError:\n"
            "    pass\n",
            str(fifo),
            chunk.decode(),
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        with pytest.raises(TeamCardValidationError, match="more than"):
            load_team_card(fifo)
    finally:
        writer.kill()
        writer.wait(timeout=30)


def test_team_create_refuses_a_huge_card_in_one_line_with_exit_2(
    run_cli: Run, tmp_path: Path
) -> None:
    card = _sparse_card(tmp_path, 200 * 1024 * 1024)
    result = run_cli("team", "create", str(card), "--no-interactive")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert str(MAX_CARD_BYTES) in lines[0] and "huge.yaml" in lines[0]
