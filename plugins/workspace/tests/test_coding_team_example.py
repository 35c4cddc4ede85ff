"""examples/coding-team.yaml runs offline: ``akgentic run`` against the scripted server.

The developer writes and runs a script in the sandbox, the reviewer edits it, and the
journal holds both authors' commits.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from akgentic.agent import Request, StructuredOutput
from akgentic.llm.scripted_server import ScriptedLLMServer, ScriptStep, structured, tool_call

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "coding-team.yaml"
SEND = "@Developer Build it."
MODEL_LINE = "model_cfg: {provider: openai, model: gpt-4.1-mini}"


def say(to: str, kind: str, text: str) -> ScriptStep:
    return structured(
        StructuredOutput(messages=[Request(recipient=to, message_type=kind, message=text)])
    )


def test_the_coding_team_example_writes_runs_reviews_and_journals(
    tmp_path: Path, workspaces_root: Path
) -> None:
    steps = [
        tool_call("workspace_write", {"path": "main.py", "content": "print('hello')\n"}),
        tool_call("workspace_exec", {"cmd": "python3 main.py"}),
        say("@Reviewer", "request", "Please review main.py."),
        tool_call("workspace_read", {"path": "main.py"}),
        tool_call(
            "workspace_edit",
            {"path": "main.py", "old_string": "'hello'", "new_string": "'hello, world'"},
        ),
        say("@Developer", "response", "Reviewed: greeting fixed."),
        say("@Human", "response", "main.py prints a greeting; reviewed."),
    ]
    with ScriptedLLMServer(steps) as server:
        inline = (
            f"model_cfg: {{provider: openai-chat, model: {server.model}, "
            f"base_url: '{server.base_url}', api_key: scripted}}"
        )
        text = EXAMPLE.read_text(encoding="utf-8")
        assert text.count(MODEL_LINE) == 2
        card = tmp_path / "coding-team.yaml"
        card.write_text(text.replace(MODEL_LINE, inline), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "AKGENTIC_MODEL")}
        env.update(
            AKGENTIC_STORE=f"sqlite:///{tmp_path}/cli.db",
            AKGENTIC_WORKSPACES_ROOT=str(workspaces_root),
            PYTHONUNBUFFERED="1",
        )
        done = subprocess.run(
            [sys.executable, "-m", "akgentic.cli", "run", str(card), "--send", SEND],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "main.py prints a greeting; reviewed." in done.stdout, done.stdout
        exec_reply = server.requests[2]["messages"][-1]["content"]
        assert "exit_code: 0 (OK)" in exec_reply and "hello" in exec_reply
    [tree] = list(workspaces_root.glob("*/_id/coding"))
    assert (tree / "main.py").read_text() == "print('hello, world')\n"
    log = subprocess.run(
        ["git", f"--git-dir={tree.with_name('coding.git')}", "log", "--reverse", "--format=%an %s"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert log[1:] == ["@Developer write: main.py", "@Reviewer edit: main.py"]
