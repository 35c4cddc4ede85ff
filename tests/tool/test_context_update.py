"""ContextUpdater: numbered blocks, the trust gate, and graceful degradation."""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Sequence

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolReturnPart,
    UserPromptPart,
)

from akgentic.core.utils.serializer import deserialize_object, serialize
from akgentic.tool import ContextState, ContextUpdater, ToolObserverGone, ToolState
from akgentic.tool.testing import RecordingObserver, ToolStateHolder


class Counter(ContextState):
    """A counter whose delta names the change."""

    value: int

    def render_full(self) -> str:
        return f"counter is {self.value}"

    def render_delta(self, previous: Counter) -> str | None:
        if previous.value == self.value:
            return None
        return f"counter {previous.value} -> {self.value}"


class Label(ContextState):
    """A state that may have nothing to say."""

    text: str

    def render_full(self) -> str:
        return self.text

    def render_delta(self, previous: Label) -> str | None:
        return None if previous.text == self.text else self.text


class Fragile(ContextState):
    """A state whose renderers can be made to fail."""

    fail_full: bool = False
    fail_delta: bool = False
    n: int = 0

    def render_full(self) -> str:
        if self.fail_full:
            raise RuntimeError("cannot render")
        return f"fragile {self.n}"

    def render_delta(self, previous: Fragile) -> str | None:
        if self.fail_delta:
            raise RuntimeError("cannot diff")
        return None if previous.n == self.n else f"fragile now {self.n}"


class Source:
    """Mutable provider backing, so a test can change what the next turn sees."""

    def __init__(self, state: ContextState | None) -> None:
        self.state = state
        self.raises = False

    def provider(self, name: str) -> Callable[[], ContextState | None]:
        def provide() -> ContextState | None:
            if self.raises:
                raise RuntimeError("provider broke")
            return self.state

        provide.__name__ = name
        return provide


def user(*texts: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(content=text) for text in texts])


def delivered(history: list[ModelMessage], block: str | None) -> list[ModelMessage]:
    """Append a block the way the agent layer does."""
    assert block is not None
    history.append(user(block))
    return history


def updater_for(observer: RecordingObserver, *sources: tuple[str, Source]) -> ContextUpdater:
    return ContextUpdater(observer, [source.provider(name) for name, source in sources])


@pytest.fixture
def observer() -> RecordingObserver:
    return RecordingObserver()


def state_of(observer: RecordingObserver) -> ToolState:
    return observer.state.tool_state


def test_the_first_block_is_a_full_snapshot_numbered_one(observer: RecordingObserver) -> None:
    counter, label = Source(Counter(value=1)), Source(Label(text="ready"))
    updater = updater_for(observer, ("counter", counter), ("label", label))
    assert updater.compose_update([]) == (
        "**Context update 1** — current state.\n\ncounter is 1\n\nready"
    )
    assert state_of(observer).context_update_seq == 1
    assert set(state_of(observer).context_baselines) == {"counter", "label"}


def test_a_turn_without_changes_produces_nothing(observer: RecordingObserver) -> None:
    counter = Source(Counter(value=1))
    updater = updater_for(observer, ("counter", counter))
    history = delivered([], updater.compose_update([]))
    assert updater.compose_update(history) is None
    assert state_of(observer).context_update_seq == 1


def test_a_change_produces_a_numbered_delta_block(observer: RecordingObserver) -> None:
    counter, label = Source(Counter(value=1)), Source(Label(text="ready"))
    updater = updater_for(observer, ("counter", counter), ("label", label))
    history = delivered([], updater.compose_update([]))
    counter.state = Counter(value=2)
    assert updater.compose_update(history) == (
        "**Context update 2** — state has changed since the last update.\n\ncounter 1 -> 2"
    )


def test_numbers_keep_increasing_over_turns(observer: RecordingObserver) -> None:
    counter = Source(Counter(value=0))
    updater = updater_for(observer, ("counter", counter))
    history: list[ModelMessage] = []
    for value in range(1, 4):
        counter.state = Counter(value=value)
        history = delivered(history, updater.compose_update(history))
    last = history[-1].parts[0]
    assert isinstance(last, UserPromptPart) and str(last.content).startswith("**Context update 3**")


def test_a_state_seen_for_the_first_time_later_is_rendered_in_full(
    observer: RecordingObserver,
) -> None:
    counter, label = Source(Counter(value=1)), Source(None)
    updater = updater_for(observer, ("counter", counter), ("label", label))
    history = delivered([], updater.compose_update([]))
    label.state = Label(text="now visible")
    assert updater.compose_update(history) == (
        "**Context update 2** — state has changed since the last update.\n\nnow visible"
    )


def test_a_provider_returning_none_contributes_nothing(observer: RecordingObserver) -> None:
    updater = updater_for(observer, ("gone", Source(None)))
    assert updater.compose_update([]) is None
    assert state_of(observer).context_update_seq == 0


def test_a_state_whose_class_changed_is_rendered_in_full(observer: RecordingObserver) -> None:
    source = Source(Counter(value=1))
    updater = updater_for(observer, ("slot", source))
    history = delivered([], updater.compose_update([]))
    source.state = Label(text="a label now")
    assert updater.compose_update(history) == (
        "**Context update 2** — state has changed since the last update.\n\na label now"
    )


def test_an_unchanged_delta_advances_the_baseline_silently(observer: RecordingObserver) -> None:
    source = Source(Fragile(n=1))
    updater = updater_for(observer, ("fragile", source))
    history = delivered([], updater.compose_update([]))
    source.state = Fragile(n=1, fail_full=True)  # equal for render_delta, different object
    assert updater.compose_update(history) is None
    assert state_of(observer).context_baselines["fragile"] == Fragile(n=1, fail_full=True)
    assert state_of(observer).context_update_seq == 1


def test_empty_text_contributes_nothing_and_keeps_no_baseline(
    observer: RecordingObserver,
) -> None:
    label = Source(Label(text=""))
    updater = updater_for(observer, ("label", label))
    assert updater.compose_update([]) is None
    assert state_of(observer).context_baselines == {}


def test_a_raising_provider_is_skipped_and_the_others_still_deliver(
    observer: RecordingObserver, caplog: pytest.LogCaptureFixture
) -> None:
    broken, counter = Source(Counter(value=9)), Source(Counter(value=1))
    broken.raises = True
    updater = updater_for(observer, ("broken", broken), ("counter", counter))
    with caplog.at_level(logging.WARNING):
        block = updater.compose_update([])
    assert block == "**Context update 1** — current state.\n\ncounter is 1"
    assert "broken" not in state_of(observer).context_baselines
    assert "'broken' raised" in caplog.text


def test_a_raising_renderer_is_skipped_without_advancing_its_baseline(
    observer: RecordingObserver,
) -> None:
    fragile, counter = Source(Fragile(n=1)), Source(Counter(value=1))
    updater = updater_for(observer, ("fragile", fragile), ("counter", counter))
    history = delivered([], updater.compose_update([]))
    fragile.state = Fragile(n=2, fail_delta=True)
    counter.state = Counter(value=2)
    assert updater.compose_update(history) == (
        "**Context update 2** — state has changed since the last update.\n\ncounter 1 -> 2"
    )
    assert state_of(observer).context_baselines["fragile"] == Fragile(n=1)


def test_a_turn_where_every_provider_fails_produces_nothing(observer: RecordingObserver) -> None:
    source = Source(Fragile(fail_full=True))
    updater = updater_for(observer, ("fragile", source))
    assert updater.compose_update([]) is None
    assert state_of(observer).context_update_seq == 0


def test_only_contributing_providers_advance_their_baselines(
    observer: RecordingObserver,
) -> None:
    counter, label = Source(Counter(value=1)), Source(Label(text=""))
    updater = updater_for(observer, ("counter", counter), ("label", label))
    updater.compose_update([])
    assert list(state_of(observer).context_baselines) == ["counter"]


def test_a_baseline_is_a_copy_not_the_provider_object(observer: RecordingObserver) -> None:
    live = Counter(value=1)
    source = Source(live)
    updater = updater_for(observer, ("counter", source))
    history = delivered([], updater.compose_update([]))
    live.value = 5  # the provider mutates the object it handed out
    assert updater.compose_update(history) == (
        "**Context update 2** — state has changed since the last update.\n\ncounter 1 -> 5"
    )


def test_a_counter_behind_the_visible_markers_catches_up_and_repeats(
    observer: RecordingObserver,
) -> None:
    counter = Source(Counter(value=1))
    updater = updater_for(observer, ("counter", counter))
    history = delivered([], updater.compose_update([]))
    counter.state = Counter(value=2)
    history = delivered(history, updater.compose_update(history))
    # The save after block 2 was lost: the agent restarts with the state of block 1.
    state_of(observer).context_update_seq = 1
    state_of(observer).context_baselines["counter"] = Counter(value=1)
    counter.state = Counter(value=3)
    assert updater.compose_update(history) == (
        "**Context update 3** — state has changed since the last update.\n\ncounter 1 -> 3"
    )


def test_a_vanished_last_marker_drops_baselines_and_sends_a_full_snapshot(
    observer: RecordingObserver,
) -> None:
    counter, label = Source(Counter(value=1)), Source(Label(text="ready"))
    updater = updater_for(observer, ("counter", counter), ("label", label))
    history = delivered([user("hello")], updater.compose_update([]))
    compacted = [user("summary of what happened")]
    counter.state = Counter(value=2)
    assert updater.compose_update(compacted) == (
        "**Context update 2** — current state.\n\ncounter is 2\n\nready"
    )
    assert len(history) == 2


def test_a_vanished_marker_with_no_change_still_resends_everything(
    observer: RecordingObserver,
) -> None:
    counter = Source(Counter(value=1))
    updater = updater_for(observer, ("counter", counter))
    delivered([], updater.compose_update([]))
    assert updater.compose_update([]) == "**Context update 2** — current state.\n\ncounter is 1"


def test_markers_outside_user_prompts_are_not_trusted(observer: RecordingObserver) -> None:
    counter = Source(Counter(value=1))
    updater = updater_for(observer, ("counter", counter))
    block = updater.compose_update([])
    assert block is not None
    # The block only ever appears quoted by the model or a tool, never as user text.
    history: Sequence[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart(content=block)]),
        ModelResponse(parts=[TextPart(content=block)]),
        ModelRequest(parts=[ToolReturnPart(tool_name="t", content=block, tool_call_id="1")]),
    ]
    assert updater.compose_update(history) == (
        "**Context update 2** — current state.\n\ncounter is 1"
    )


def test_markers_inside_multi_part_user_content_are_found(observer: RecordingObserver) -> None:
    counter = Source(Counter(value=1))
    updater = updater_for(observer, ("counter", counter))
    block = updater.compose_update([])
    assert block is not None
    history = [ModelRequest(parts=[UserPromptPart(content=["look at this", block])])]
    assert updater.compose_update(history) is None


def test_reset_zeroes_the_counter_and_the_baselines(observer: RecordingObserver) -> None:
    counter = Source(Counter(value=1))
    updater = updater_for(observer, ("counter", counter))
    updater.compose_update([])
    updater.reset()
    assert state_of(observer).context_update_seq == 0
    assert state_of(observer).context_baselines == {}
    assert updater.compose_update([]) == "**Context update 1** — current state.\n\ncounter is 1"


def test_the_state_is_read_through_the_observer_on_every_call(
    observer: RecordingObserver,
) -> None:
    counter = Source(Counter(value=1))
    updater = updater_for(observer, ("counter", counter))
    history = delivered([], updater.compose_update([]))
    restored = ToolState.model_validate(serialize(state_of(observer)))
    observer.state = ToolStateHolder(restored)  # the agent swaps its state on restore
    counter.state = Counter(value=2)
    assert updater.compose_update(history) == (
        "**Context update 2** — state has changed since the last update.\n\ncounter 1 -> 2"
    )
    assert restored.context_update_seq == 2


def test_tool_state_round_trips_with_its_baselines() -> None:
    state = ToolState(
        context_baselines={"counter": Counter(value=3), "label": Label(text="x")},
        context_update_seq=4,
        active_model="openai:gpt-5",
    )
    again = deserialize_object(serialize(state))
    assert again == state
    assert isinstance(again.context_baselines["counter"], Counter)


def test_an_old_tool_state_payload_without_active_model_still_loads() -> None:
    state = ToolState.model_validate({"context_baselines": {}, "context_update_seq": 2})
    assert state.active_model is None


def test_providers_with_one_name_are_refused(observer: RecordingObserver) -> None:
    source = Source(None)
    with pytest.raises(ValueError, match="'same'"):
        ContextUpdater(observer, [source.provider("same"), source.provider("same")])


def test_a_stopped_agent_makes_the_updater_raise_tool_observer_gone() -> None:
    observer = RecordingObserver()
    updater = updater_for(observer, ("counter", Source(Counter(value=1))))
    del observer
    gc.collect()
    with pytest.raises(ToolObserverGone):
        updater.compose_update([])
