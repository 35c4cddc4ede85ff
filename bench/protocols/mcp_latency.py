"""Latency MCP adds to a team turn: ``akgentic mcp serve`` over stdio and streamable HTTP.

Prints one JSON object::

    {"samples": 200, "direct_ms_p50": ..., "mcp_stdio_round_trip_ms_p50": ...,
     "mcp_http_round_trip_ms_p50": ..., "mcp_stdio_ms_p50": ..., "mcp_http_ms_p50": ...}

The team is ``examples/replier-team.yaml`` (``@Replier`` answers ``Echo: <text>`` at
once, no model), on a fresh SQLite store in a temporary directory.

- ``direct_ms_p50``: in this process, the team served as the MCP server serves it
  (:class:`akgentic_mcp_server.team.ServedTeam`), one turn = ``TeamRuntime.send`` of
  the message, then ``wait_idle`` until the reply reached the human and the team is
  idle (what ``ask`` waits for), checked to have produced the echo.
- ``mcp_stdio_round_trip_ms_p50``: the ``ask`` tool called by the official ``mcp``
  client on ``akgentic mcp serve`` started as a child over stdio, from the call until
  the result is back in the client; ``mcp_http_round_trip_ms_p50`` the same over
  streamable HTTP on 127.0.0.1.
- ``mcp_stdio_ms_p50`` / ``mcp_http_ms_p50``: the round trip's p50 minus the direct
  p50, the latency the protocol, the transport and the server's thread hops add.

Each measure runs 20 warm-up turns, then ``--samples`` (200) timed ones, one at a time.
Target: each added p50 at most 5 ms on the development machine.

Run: ``.venv/bin/python bench/interop_mcp.py [--samples 200]`` (needs the
``akgentic-mcp-server`` plugin).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from akgentic_mcp_server.team import ServedTeam
from akgentic_mcp_server.testing import SyncClient, connect, http_child, stdio_session

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CARD = EXAMPLES / "replier-team.yaml"
WARM_UP = 20


def _p50_ms(times: list[float]) -> float:
    return round(statistics.median(times) * 1000, 3)


def direct(root: Path, samples: int) -> list[float]:
    """Turn times of ``TeamRuntime.send`` + ``wait_idle`` in this process."""
    team = ServedTeam.open(str(CARD), f"sqlite:///{root}/direct.db", [EXAMPLES])
    assert team.error is None, team.error
    try:
        runtime = team.runtime()
        times = []
        for index in range(WARM_UP + samples):
            message = team.message(f"turn {index}")
            turn = team.follow(message.id)
            started = time.perf_counter()
            runtime.send(message)
            assert runtime.wait_idle(10)
            elapsed = time.perf_counter() - started
            team.unfollow(turn)
            assert [r["content"] for r in turn.replies] == [f"Echo: turn {index}"]
            if index >= WARM_UP:
                times.append(elapsed)
        return times
    finally:
        team.close()


def over_mcp(client: SyncClient, samples: int) -> list[float]:
    """Round-trip times of the ``ask`` tool."""
    times = []
    for index in range(WARM_UP + samples):
        started = time.perf_counter()
        result = client.call("ask", {"text": f"turn {index}"})
        elapsed = time.perf_counter() - started
        assert SyncClient.text(result) == f"Echo: turn {index}", SyncClient.text(result)
        if index >= WARM_UP:
            times.append(elapsed)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        log = root / "server.log"
        base = _p50_ms(direct(root, args.samples))
        with stdio_session(str(CARD), f"sqlite:///{root}/stdio.db", root, log) as client:
            stdio = _p50_ms(over_mcp(client, args.samples))
        with (
            http_child(str(CARD), f"sqlite:///{root}/http.db", root, log) as url,
            connect(url) as client,
        ):
            http = _p50_ms(over_mcp(client, args.samples))
    json.dump(
        {
            "samples": args.samples,
            "direct_ms_p50": base,
            "mcp_stdio_round_trip_ms_p50": stdio,
            "mcp_http_round_trip_ms_p50": http,
            "mcp_stdio_ms_p50": round(stdio - base, 3),
            "mcp_http_ms_p50": round(http - base, 3),
        },
        sys.stdout,
    )
    print()


if __name__ == "__main__":
    main()
