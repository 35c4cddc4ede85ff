"""How long ``akgentic run`` lives after "stopped and saved" while its model hangs.

Starts the scripted model server with every request hung (accepted, never
answered), runs ``akgentic run`` on the demo card pointed at it with ``--send``
and a short ``--timeout``, and measures the seconds between the "stopped and
saved" line and the process's exit. The target (issue 33) is under 2 s whatever
the model server does. Prints one JSON object: the figure of each run, the
worst, and ``target_met``. ``--runs N`` (default 3).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from akgentic.cli.demo_cmd import DEMO_CARD
from akgentic.llm.scripted_server import ScriptedLLMServer, hang

_DEMO_MODEL_LINE = "model_cfg: {provider: openai, model: gpt-4.1-mini}"
TARGET_S = 2.0
GUARD_S = 600.0
SEND = ("--send", "Why are octopuses odd?", "--timeout", "1")


def one_run(server: ScriptedLLMServer, workdir: Path) -> dict[str, float]:
    """One ``akgentic run``: seconds from start to the stop line and from it to exit."""
    inline = (
        f"model_cfg: {{provider: openai-chat, model: {server.model}, "
        f"base_url: '{server.base_url}', api_key: scripted}}"
    )
    card = workdir / "team.yaml"
    card.write_text(DEMO_CARD.read_text().replace(_DEMO_MODEL_LINE, inline))
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(AKGENTIC_STORE=f"sqlite:///{workdir}/bench.db", PYTHONUNBUFFERED="1")
    start = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "akgentic.cli.run_cmd", "run", str(card), *SEND],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=workdir,
    )
    assert child.stdout is not None
    stopped_at = None
    for line in child.stdout:
        if "stopped and saved" in line and stopped_at is None:
            stopped_at = time.monotonic()
    child.wait(timeout=GUARD_S)
    ended = time.monotonic()
    if stopped_at is None:
        raise RuntimeError("akgentic run never printed 'stopped and saved'")
    return {"to_stop_s": stopped_at - start, "exit_after_stop_s": ended - stopped_at}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs = []
    with ScriptedLLMServer(fallback=hang()) as server:
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                runs.append(one_run(server, Path(tmp)))
    worst = max(r["exit_after_stop_s"] for r in runs)
    report = {
        "benchmark": "stop_latency",
        "runs": [{k: round(v, 3) for k, v in r.items()} for r in runs],
        "worst_exit_after_stop_s": round(worst, 3),
        "target_s": TARGET_S,
        "target_met": worst < TARGET_S,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
