"""schemathesis over the console's own OpenAPI document: no request gets a server error.

The stream is left out (it never ends by design; the other tests read it). The
run is bounded: a few derandomized examples per operation, no deadline.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error


def test_no_request_gets_a_server_error(shared_console: tuple[str, str, str]) -> None:
    url, _team_id, token = shared_console
    auth = {"Authorization": f"Bearer {token}"}
    schema = schemathesis.openapi.from_url(url + "api/openapi.json", headers=auth)
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    checked = [op for op in operations if not op.path.endswith("/stream")]
    assert len(checked) >= 12, [op.path for op in operations]
    for operation in checked:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=25,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def call(case: Any) -> None:
            case.call_and_validate(headers=auth, checks=[not_a_server_error])

        call()
