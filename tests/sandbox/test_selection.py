"""Choosing a backend: by name, by AKGENTIC_SANDBOX_BACKEND, else the first available.

The specs here are inline records whose factories build nothing runnable: selection
never starts a backend, it only reads names and availability.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from akgentic.plugins import SandboxBackendSpec, hookimpl
from akgentic.sandbox import SandboxUnavailableError, backend_statuses, resolve_sandbox_backend


def _spec(name: str, reason: str | None = None) -> SandboxBackendSpec:
    return SandboxBackendSpec(
        name=name, factory=object, available=lambda: reason, install_hint=f"get {name}"
    )


def test_the_first_available_of_bwrap_then_docker_is_chosen(
    caplog: pytest.LogCaptureFixture,
) -> None:
    specs = {"docker": _spec("docker"), "bwrap": _spec("bwrap", "no bwrap")}
    with caplog.at_level(logging.INFO, logger="akgentic.sandbox.selection"):
        assert resolve_sandbox_backend(specs=specs, environ={}).name == "docker"
    assert "'docker' chosen" in caplog.text
    specs["bwrap"] = _spec("bwrap")
    assert resolve_sandbox_backend(specs=specs, environ={}).name == "bwrap"


def test_a_backend_outside_the_default_order_is_used_only_by_name() -> None:
    specs = {"fake": _spec("fake")}
    with pytest.raises(SandboxUnavailableError, match="no sandbox backend can run"):
        resolve_sandbox_backend(specs=specs, environ={})
    assert resolve_sandbox_backend("fake", specs=specs, environ={}).name == "fake"


def test_the_card_name_wins_over_the_environment_variable() -> None:
    specs = {"bwrap": _spec("bwrap"), "docker": _spec("docker")}
    env = {"AKGENTIC_SANDBOX_BACKEND": "docker"}
    assert resolve_sandbox_backend(specs=specs, environ=env).name == "docker"
    assert resolve_sandbox_backend("bwrap", specs=specs, environ=env).name == "bwrap"


def test_an_unknown_name_fails_listing_backends_and_what_to_install() -> None:
    specs = {"bwrap": _spec("bwrap")}
    with pytest.raises(SandboxUnavailableError) as info:
        resolve_sandbox_backend(specs=specs, environ={"AKGENTIC_SANDBOX_BACKEND": "docker"})
    message = str(info.value)
    assert "'docker' (named by AKGENTIC_SANDBOX_BACKEND) is not installed" in message
    assert "pip install akgentic-docker" in message
    assert "bwrap: ready" in message
    assert "never run unsandboxed" in message


def test_an_unavailable_named_backend_fails_with_its_reason_and_hint() -> None:
    specs = {"bwrap": _spec("bwrap", "bwrap is not on PATH")}
    with pytest.raises(SandboxUnavailableError, match="cannot run here: bwrap is not on PATH") as e:
        resolve_sandbox_backend("bwrap", specs=specs, environ={})
    assert "get bwrap" in str(e.value)


def test_nothing_usable_fails_and_never_falls_back() -> None:
    specs = {"bwrap": _spec("bwrap", "no user namespaces"), "docker": _spec("docker", "no engine")}
    with pytest.raises(SandboxUnavailableError) as info:
        resolve_sandbox_backend(specs=specs, environ={})
    message = str(info.value)
    assert "bwrap: unavailable: no user namespaces" in message
    assert "docker: unavailable: no engine" in message


def test_an_availability_check_that_raises_makes_the_backend_unusable() -> None:
    def broken() -> str | None:
        raise RuntimeError("probe exploded")

    spec = SandboxBackendSpec(name="bwrap", factory=object, available=broken)
    (status, _docker) = backend_statuses({"bwrap": spec})
    assert not status.usable and "probe exploded" in (status.reason or "")


def test_boolean_availability_is_accepted_too() -> None:
    specs = {
        "bwrap": SandboxBackendSpec(name="bwrap", factory=object, available=lambda: False),
        "docker": SandboxBackendSpec(name="docker", factory=object, available=lambda: True),
    }
    assert resolve_sandbox_backend(specs=specs, environ={}).name == "docker"


def test_the_process_registry_is_used_by_default(
    register_plugin: Callable[..., Any],
) -> None:
    class Plugin:
        @hookimpl
        def akgentic_sandbox_backends(self) -> list[SandboxBackendSpec]:
            return [_spec("docker")]

    register_plugin(Plugin(), "inline-sandbox")
    assert resolve_sandbox_backend(environ={}).name == "docker"
