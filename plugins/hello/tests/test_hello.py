"""The hello plugin, tested the way a third-party author would test theirs."""

from __future__ import annotations

from collections.abc import Callable

import akgentic_hello.plugin
from typer.testing import CliRunner

from akgentic.cli import build_app
from akgentic.plugins import PluginInfo, get_host


def test_hello_command_greets_through_an_isolated_host(
    register_plugin: Callable[..., PluginInfo],
) -> None:
    register_plugin(akgentic_hello.plugin, "hello")
    app = build_app()
    info = get_host().plugin("hello")
    assert info is not None and info.provides["cli"] == ["hello"]
    result = CliRunner().invoke(app, ["hello", "Grace"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "Hello, Grace!"


def test_hello_defaults_to_greeting_the_world(
    register_plugin: Callable[..., PluginInfo],
) -> None:
    register_plugin(akgentic_hello.plugin, "hello")
    result = CliRunner().invoke(build_app(), ["hello"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "Hello, world!"
