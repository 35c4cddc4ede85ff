"""Team-card loading speed on hostile input, printed as ONE JSON object::

    {"runs": 5, "alias_bomb_refusal_ms": ..., "alias_bomb_peak_mb": ...,
     "plain_card_load_ms": ...}

- ``alias_bomb_refusal_ms``: median wall milliseconds of ``load_team_card`` on a card of
  under a kilobyte whose nine nested levels of nine aliases expand to 9**9 (387
  million) nodes, until it is refused (the spec: under one second);
- ``alias_bomb_peak_mb``: the peak RSS (VmHWM) of the child that refused it (under 100);
- ``plain_card_load_ms``: the same load of a two-member card without aliases, for scale.

Each run is a fresh interpreter with the card's classes imported before the clock
starts. These replace a wall-clock bound in ``tests/team/test_hostile_cards.py``,
which checks the behaviour (refused within one pass over the parser's events, the
line named, the memory) and never the seconds.
Run: ``.venv/bin/python bench/cards.py [--runs N] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_HEAD = """\
name: hostile
entry_point:
  card:
    agent_class: akgentic.agent.BaseAgent
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

PLAIN = """\
name: plain
entry_point:
  card:
    agent_class: akgentic.agent.BaseAgent
    description: entry
    config: {name: "@Entry", role: Entry}
members:
  - card:
      agent_class: akgentic.agent.BaseAgent
      description: helper
      config: {name: "@Helper", role: Helper}
"""

_CHILD = """\
import json, re, sys, time
from akgentic.team.card_yaml import TeamCardValidationError, load_team_card
import akgentic.agent
start = time.perf_counter()
try:
    load_team_card(sys.argv[1])
    refused = False
except TeamCardValidationError:
    refused = True
elapsed = time.perf_counter() - start
status = open("/proc/self/status").read()
peak_kb = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
print(json.dumps({"ms": elapsed * 1000, "peak_mb": peak_kb / 1024, "refused": refused}))
"""

KEYS = ("runs", "alias_bomb_refusal_ms", "alias_bomb_peak_mb", "plain_card_load_ms")


def bomb() -> str:
    """Nine levels of nine aliases, each level repeating the one before."""
    levels = []
    previous = None
    for name in "abcdefghi":
        item = f"*{previous}" if previous else "x"
        levels.append(f"            {name}: &{name} [{', '.join([item] * 9)}]\n")
        previous = name
    return _HEAD + "".join(levels)


def _load(path: Path) -> dict[str, float | bool]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, float | bool] = json.loads(out.stdout)
    return result


def measure(runs: int) -> dict[str, float | int]:
    """The report (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        hostile = Path(tmp) / "bomb.yaml"
        hostile.write_text(bomb())
        plain = Path(tmp) / "plain.yaml"
        plain.write_text(PLAIN)
        bombs = [_load(hostile) for _ in range(runs)]
        if not all(b["refused"] for b in bombs):
            raise SystemExit("the alias bomb card was not refused")
        plains = [_load(plain) for _ in range(runs)]
    return {
        "runs": runs,
        "alias_bomb_refusal_ms": round(statistics.median(float(b["ms"]) for b in bombs), 3),
        "alias_bomb_peak_mb": round(max(float(b["peak_mb"]) for b in bombs), 1),
        "plain_card_load_ms": round(statistics.median(float(p["ms"]) for p in plains), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one run of each")
    options = parser.parse_args()
    print(json.dumps(measure(1 if options.quick else options.runs)))


if __name__ == "__main__":
    main()
