"""``akgentic serve`` as a real process: the token, refusals, security headers."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from akgentic.testing.console import ServeProcess, running_console


def _without_token_env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "AKGENTIC_CONSOLE_TOKEN"}
    return {**env, "PYTHONUNBUFFERED": "1"}


def _assert_every_request_needs_the_token(serve: ServeProcess) -> None:
    token = serve.token
    assert token is not None and len(token) >= 20
    for path in ("", "static/console.js", "api/teams", "api/openapi.json", "api/examples"):
        assert httpx.get(serve.url + path).status_code == 401, path
    team = "00000000-0000-4000-8000-000000000000"
    assert httpx.get(serve.url + f"api/teams/{team}/stream").status_code == 401
    created = httpx.post(serve.url + "api/teams", json={"example": "demo-team.yaml"})
    assert created.status_code == 401
    # The query token opens the page only: not a credential for the API or the stream.
    assert httpx.get(serve.url + "api/teams", params={"token": token}).status_code == 401
    stream = httpx.get(serve.url + f"api/teams/{team}/stream", params={"token": token})
    assert stream.status_code == 401
    wrong = httpx.get(serve.url + "api/teams", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    with serve.client() as client:
        good = client.get("api/teams")
    assert good.status_code == 200 and good.json() == []
    page = httpx.get(serve.page_url)
    assert page.status_code == 303 and page.headers["location"] == "/"
    cookie = page.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and token in cookie
    with httpx.Client(base_url=serve.url, cookies=page.cookies) as browser_like:
        assert browser_like.get("").status_code == 200
        assert browser_like.get("static/console.js").status_code == 200
        assert browser_like.get("api/teams").status_code == 200


def test_on_loopback_without_a_token_one_is_generated_and_every_request_needs_it(
    store_url: str, tmp_path: Path
) -> None:
    serve = ServeProcess(store_url, str(tmp_path))
    serve.env = _without_token_env()
    with serve:
        line = serve.wait_for_output("?token=")
        assert line.strip().startswith("open http://localhost:")
        _assert_every_request_needs_the_token(serve)


def test_off_loopback_without_a_token_one_is_generated_and_every_request_needs_it(
    store_url: str, tmp_path: Path
) -> None:
    serve = ServeProcess(store_url, str(tmp_path), "--host", "0.0.0.0")
    serve.env = _without_token_env()
    with serve:
        _assert_every_request_needs_the_token(serve)


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        (" ", "token must not be empty"),
        ("short-token", "at least 16 characters"),
        ("a" * 20 + "; Path=/evil", "may hold only letters"),
    ],
)
def test_an_empty_short_or_malformed_token_is_refused_at_start(
    store_url: str, tmp_path: Path, token: str, problem: str
) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "akgentic.cli", "serve", "--store", store_url, "--token", token],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and problem in done.stderr


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
        assert httpx.get(server.url + "api/teams").status_code == 401  # loopback too


def test_on_loopback_a_given_token_is_enforced(store_url: str) -> None:
    with running_console(store_url, token="s3cret-token-0123") as (server, client):
        assert server.token == "s3cret-token-0123"
        assert client.get("/api/teams").status_code == 200
        assert httpx.get(server.url + "api/teams").status_code == 401
        bad = httpx.get(server.url + "api/teams", headers={"Cookie": "akgentic_console_token=x"})
        assert bad.status_code == 401


def test_behind_a_proxy_writes_from_the_given_public_origin_only_are_accepted(
    store_url: str,
) -> None:
    with running_console(store_url, origin="https://console.example.com") as (server, client):
        proxied = {"Origin": "https://console.example.com"}
        bad = client.post("/api/teams", json={"example": "nope.yaml"}, headers=proxied)
        assert bad.status_code == 400  # past the origin check, refused as input
        evil = {"Origin": "https://evil.example.com"}
        refused = client.post("/api/teams", json={"example": "nope.yaml"}, headers=evil)
        assert refused.status_code == 403
        opened = httpx.get(server.page_url)
        assert opened.status_code == 303 and "; Secure" in opened.headers["set-cookie"]
