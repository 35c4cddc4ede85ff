"""The store-plugin kit: drivers imported on demand, the init-container entry point."""

from __future__ import annotations

import sys

import pytest

from akgentic.team.stores.kit import DriverModule, run_initialiser

ENV = "AKGENTIC_TEST_KIT_URL"


def test_a_driver_module_loads_on_first_use() -> None:
    driver = DriverModule("json", install_hint="unused")
    assert driver.attribute("dumps")({"a": 1}) == '{"a": 1}'


def test_a_missing_driver_says_what_to_install() -> None:
    driver = DriverModule("akgentic_no_such_driver.store", install_hint="pip install nothing")
    with pytest.raises(ImportError, match="pip install nothing") as caught:
        driver.attribute("Store")
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)
    assert "akgentic_no_such_driver.store" not in sys.modules


def test_the_initialiser_reports_a_ready_store_with_the_secret_masked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[str] = []
    monkeypatch.setenv(ENV, "  db://user:secret@host/x  ")
    code = run_initialiser(
        ENV,
        url_kind="a db:// URL",
        initialise=lambda url: calls.append(url),
        redact=lambda url: url.replace("secret", "***"),
        ready="ready",
    )
    assert code == 0 and calls == ["db://user:secret@host/x"]
    out = capsys.readouterr()
    assert out.out == "ready: db://user:***@host/x\n" and "secret" not in out.out


@pytest.mark.parametrize("value", [None, "", "   "])
def test_no_url_is_exit_code_2(
    value: str | None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if value is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, value)
    called: list[str] = []
    code = run_initialiser(
        ENV, url_kind="a db:// URL", initialise=called.append, redact=str, ready="ready"
    )
    assert code == 2 and called == []
    assert f"{ENV} is not set (a db:// URL)" in capsys.readouterr().err


def test_a_failing_initialisation_is_exit_code_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV, "db://host/x")

    def refuse(url: str) -> None:
        raise PermissionError("permission denied for schema public")

    code = run_initialiser(ENV, url_kind="a db:// URL", initialise=refuse, redact=str, ready="r")
    assert code == 1
    err = capsys.readouterr().err
    assert "permission denied for schema public" in err
