"""check_required answers every request as the SDK's own REQUIRED-field check does."""

from __future__ import annotations

import pytest
from a2a.types.a2a_pb2 import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import InvalidParamsError
from a2a.utils.proto_utils import validate_proto_required_fields
from akgentic_a2a.required import check_required


def _sdk_error(request: SendMessageRequest) -> InvalidParamsError | None:
    try:
        validate_proto_required_fields(request)
    except InvalidParamsError as exc:
        return exc
    return None


CASES = {
    "complete": SendMessageRequest(
        message=Message(message_id="m", role=Role.ROLE_USER, parts=[Part(text="hi")])
    ),
    "with a configuration": SendMessageRequest(
        message=Message(message_id="m", role=Role.ROLE_USER, parts=[Part(text="hi")]),
        configuration=SendMessageConfiguration(history_length=2),
    ),
    "no message id": SendMessageRequest(
        message=Message(role=Role.ROLE_USER, parts=[Part(text="hi")])
    ),
    "no role": SendMessageRequest(message=Message(message_id="m", parts=[Part(text="hi")])),
    "no parts": SendMessageRequest(message=Message(message_id="m", role=Role.ROLE_USER)),
    "no message": SendMessageRequest(),
    "a nested required field unset": SendMessageRequest(
        message=Message(message_id="m", role=Role.ROLE_USER, parts=[Part(text="hi")]),
        configuration=SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig()
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_same_requests_pass_and_fail_with_the_sdks_error(name: str) -> None:
    request = CASES[name]
    expected = _sdk_error(request)
    if expected is None:
        check_required(request)
        return
    with pytest.raises(InvalidParamsError) as raised:
        check_required(request)
    assert raised.value.message == expected.message
    assert raised.value.data == expected.data


def test_both_outcomes_are_covered() -> None:
    outcomes = {_sdk_error(request) is None for request in CASES.values()}
    assert outcomes == {True, False}
