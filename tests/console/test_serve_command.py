"""``akgentic serve`` as a real process: tokens off loopback, refusals, security headers."""

from __future__ import annotations

from pathlib import Path

import httpx

from akgentic.testing.console import ServeProcess, running_console


def test_off_loopback_without_a_token_one_is_generated_and_every_request_needs_it(
    store_url: str, tmp_path: Path
) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "AKGENTIC_CONSOLE_TOKEN"}
    serve = ServeProcess(store_url, str(tmp_path), "--host", "0.0.0.0")
    serve.env = {**env, "PYTHONUNBUFFERED": "1"}
    with serve:
        line = serve.wait_for_output("token (generated):")
        token = line.split(":", 1)[1].strip()
        assert len(token) >= 20
        for path in ("", "static/console.js", "api/teams", "api/openapi.json"):
            assert httpx.get(serve.url + path).status_code == 401, path
        team = "00000000-0000-4000-8000-000000000000"
        stream = httpx.get(serve.url + f"api/teams/{team}/stream")
        assert stream.status_code == 401
        wrong = httpx.get(serve.url + "api/teams", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        good = httpx.get(serve.url + "api/teams", headers={"Authorization": f"Bearer {token}"})
        assert good.status_code == 200 and good.json() == []
        page = httpx.get(serve.url, params={"token": token})
        assert page.status_code == 200 and "set-cookie" in page.headers
        with httpx.Client(base_url=serve.url, cookies=page.cookies) as browser_like:
            assert browser_like.get("static/console.js").status_code == 200


def test_an_empty_token_is_refused_at_start(store_url: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "akgentic.cli", "serve", "--store", store_url, "--token", " "],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "token must not be empty" in done.stderr


def test_cross_site_writes_and_foreign_host_names_are_refused(store_url: str) -> None:
    with running_console(store_url) as (server, client):
        evil = client.post(
            "/api/teams", json={"example": "demo-team.yaml"}, headers={"Origin": "http://evil.test"}
        )
        assert evil.status_code == 403
        rebound = client.get("/api/teams", headers={"Host": "evil.test"})
        assert rebound.status_code == 403
        page = client.get("/")
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert page.headers["x-content-type-options"] == "nosniff"
        assert httpx.get(server.url + "api/teams").status_code == 200  # loopback: no token


def test_on_loopback_a_given_token_is_enforced(store_url: str) -> None:
    with running_console(store_url, token="s3cret-token") as (server, client):
        assert client.get("/api/teams").status_code == 200
        assert httpx.get(server.url + "api/teams").status_code == 401
