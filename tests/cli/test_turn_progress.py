"""While a model call runs, ``akgentic run`` says which agent is waiting on its model.

A real ``akgentic run`` subprocess; the scripted model holds its first reply until the
test has seen the progress line, then answers, so nothing here depends on timing.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from akgentic.cli.demo_cmd import DEMO_CARD, DemoScript
from akgentic.llm.scripted_server import ScriptedLLMServer, ScriptStep

WAIT = 60.0


class HeldScript:
    """The demo's model, holding its first reply until :attr:`release` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.script = DemoScript("@Human", "Researcher")

    def __call__(self, body: dict[str, Any]) -> ScriptStep:
        self.release.wait(WAIT)
        return self.script(body)


def test_a_long_model_call_prints_who_is_thinking_then_the_answer(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    held = HeldScript()
    with ScriptedLLMServer(fallback=held) as server:
        card = tmp_path / "team.yaml"
        inline = (
            f"model_cfg: {{provider: openai-chat, model: m, base_url: '{server.base_url}', "
            "api_key: scripted}"
        )
        card.write_text(
            DEMO_CARD.read_text().replace(
                "model_cfg: {provider: openai, model: gpt-4.1-mini}", inline
            )
        )
        env = {**cli_env, "AKGENTIC_PROGRESS_INTERVAL": "1"}
        lines: queue.Queue[str] = queue.Queue()
        # ``with`` closes the child's pipes once it is reaped (and its reader is done).
        with subprocess.Popen(
            [sys.executable, "-m", "akgentic.cli.run_cmd", "run", str(card), "--send", "Why?"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        ) as child:

            def pump() -> None:
                for line in child.stdout or []:
                    lines.put(line)

            reader = threading.Thread(target=pump, daemon=True)
            reader.start()
            try:
                seen: list[str] = []
                while not any("@Manager is still thinking…" in line for line in seen):
                    seen.append(lines.get(timeout=WAIT))
                held.release.set()
                child.wait(timeout=WAIT)
                reader.join(timeout=WAIT)
                err = child.stderr.read() if child.stderr else ""
            finally:
                held.release.set()
                if child.poll() is None:
                    child.kill()
                    child.wait()
                reader.join(timeout=WAIT)
    assert child.returncode == 0, err
    while not lines.empty():
        seen.append(lines.get_nowait())
    transcript = "".join(seen)
    assert "@Manager → @Human (response): Here is what" in transcript
    # The progress line came before the answer it was waiting for.
    assert transcript.index("is still thinking") < transcript.index("Here is what")
