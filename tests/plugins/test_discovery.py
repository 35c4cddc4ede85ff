"""Entry-point discovery: loading, failures, selection and strict mode."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from akgentic.plugins import EssentialPluginError, PluginHost, PluginLoadError
from akgentic.testing.plugins import FakeDistributions

HostFactory = Callable[..., PluginHost]


def _status(host: PluginHost) -> dict[str, str]:
    return {info.name: info.status for info in host.plugins()}


def test_builtin_core_and_installed_example_plugin_are_loaded(
    discovering_host: HostFactory,
) -> None:
    host = discovering_host()
    infos = {info.name: info for info in host.plugins()}
    assert infos["core"].status == "loaded"
    assert infos["core"].builtin is True
    assert infos["core"].distribution == "akgentic"
    assert infos["hello"].status == "loaded"
    assert infos["hello"].builtin is False
    assert infos["hello"].distribution == "akgentic-hello"


def test_plugin_that_raises_at_import_is_recorded_and_others_still_load(
    discovering_host: HostFactory,
    installed_broken_and_good: FakeDistributions,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="akgentic.plugins"):
        host = discovering_host()
        statuses = _status(host)
    broken = host.plugin("broken")
    assert broken is not None
    assert broken.status == "failed"
    assert broken.distribution == "akgentic-broken"
    assert broken.version == "0.0.1"
    assert broken.error is not None and "boom at import" in broken.error
    assert statuses["goodfake"] == "loaded"
    assert statuses["core"] == "loaded"
    assert "fake-vectors" in host.registry.vector_backends()
    lines = [r.getMessage() for r in caplog.records if "broken" in r.getMessage()]
    assert len(lines) == 1
    assert "\n" not in lines[0]


def test_strict_mode_turns_a_load_failure_into_an_error_naming_the_plugin(
    discovering_host: HostFactory, installed_broken_and_good: FakeDistributions
) -> None:
    host = discovering_host(AKGENTIC_STRICT_PLUGINS="1")
    with pytest.raises(PluginLoadError) as err:
        host.load()
    assert err.value.plugin == "broken"
    assert "akgentic-broken" in str(err.value)


def test_disabled_plugin_is_not_imported_and_shows_as_disabled(
    discovering_host: HostFactory, installed_broken_and_good: FakeDistributions
) -> None:
    host = discovering_host(AKGENTIC_DISABLE_PLUGINS="broken", AKGENTIC_STRICT_PLUGINS="1")
    statuses = _status(host)
    assert statuses["broken"] == "disabled"
    assert statuses["goodfake"] == "loaded"


def test_only_list_loads_named_plugins_and_keeps_essential_builtins(
    discovering_host: HostFactory, installed_broken_and_good: FakeDistributions
) -> None:
    host = discovering_host(AKGENTIC_PLUGINS="goodfake")
    statuses = _status(host)
    assert statuses["goodfake"] == "loaded"
    assert statuses["core"] == "loaded"
    assert statuses["hello"] == "disabled"
    assert statuses["broken"] == "disabled"


def test_disabling_an_essential_builtin_is_a_clear_error(discovering_host: HostFactory) -> None:
    host = discovering_host(AKGENTIC_DISABLE_PLUGINS="core")
    with pytest.raises(EssentialPluginError, match=r"core.*essential"):
        host.load()


def test_plugin_with_an_unknown_hook_fails_registration_without_breaking_others(
    discovering_host: HostFactory, fake_distributions: FakeDistributions
) -> None:
    fake_distributions.add(
        "akgentic-typo",
        entry_points={"typo": "akgentic_typo"},
        modules={
            "akgentic_typo": (
                "from akgentic.plugins import hookimpl\n"
                "@hookimpl\n"
                "def akgentic_toolcards():\n"
                "    return []\n"
            )
        },
    )
    host = discovering_host()
    typo = host.plugin("typo")
    assert typo is not None and typo.status == "failed"
    assert typo.error is not None and "akgentic_toolcards" in typo.error
    assert host.pm.get_plugin("typo") is None
    assert _status(host)["hello"] == "loaded"


def test_two_distributions_declaring_the_same_entry_point_name_are_reported(
    discovering_host: HostFactory, fake_distributions: FakeDistributions
) -> None:
    for dist in ("akgentic-twin-a", "akgentic-twin-b"):
        module = dist.replace("-", "_")
        fake_distributions.add(dist, entry_points={"twin": module}, modules={module: "VALUE = 1\n"})
    host = discovering_host()
    twin = host.plugin("twin")
    assert twin is not None and twin.status == "failed"
    assert twin.error is not None
    assert "akgentic-twin-a" in twin.error and "akgentic-twin-b" in twin.error


def test_discovery_is_cached_per_host_and_loads_once(
    discovering_host: HostFactory, fake_distributions: FakeDistributions
) -> None:
    fake_distributions.add(
        "akgentic-counter",
        entry_points={"counter": "akgentic_counter"},
        modules={
            "akgentic_counter": "import builtins\nbuiltins.AKG_COUNTER = "
            "getattr(builtins, 'AKG_COUNTER', 0) + 1\n"
        },
    )
    import builtins

    host = discovering_host()
    host.load()
    host.load()
    host.plugins()
    assert getattr(builtins, "AKG_COUNTER", 0) == 1
    del builtins.AKG_COUNTER  # type: ignore[attr-defined]
