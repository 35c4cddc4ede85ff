"""Observable actor state with cheap change detection."""

from __future__ import annotations

from typing import Protocol, Self, runtime_checkable

from pydantic import PrivateAttr

from akgentic.core.utils.serializer import SerializableBaseModel

__all__ = ["AkgentStateObserver", "BaseState"]


@runtime_checkable
class AkgentStateObserver(Protocol):
    """Receives a state whenever it is published."""

    def notify_state_change(self, state: BaseState) -> None:
        """Called with the state that changed."""
        ...


class BaseState(SerializableBaseModel):
    """Base class of actor state.

    A state knows its observer and the JSON it last published. Checkpoints
    (:meth:`notify_if_changed`) compare against that baseline, so in-place
    mutations of lists, dicts or nested models are caught. Without an observer
    nothing is ever serialized.
    """

    _observer: AkgentStateObserver | None = PrivateAttr(default=None)
    _last_serialized: str | None = PrivateAttr(default=None)

    def observer(self, observer: AkgentStateObserver | None) -> Self:
        """Attach (or, with None, detach) the observer and publish right away."""
        self._observer = observer
        self.notify_state_change()
        return self

    def get_observer(self) -> AkgentStateObserver | None:
        """The attached observer, if any."""
        return self._observer

    def notify_state_change(self) -> None:
        """Publish now: refresh the baseline and call the observer if any."""
        observer = self._observer
        if observer is None:
            self._last_serialized = None
            return
        self._last_serialized = self.model_dump_json()
        observer.notify_state_change(self)

    def notify_if_changed(self) -> bool:
        """Publish only if the state differs from the last publication."""
        private = self.__pydantic_private__
        observer = private.get("_observer") if private else None
        if observer is None:
            return False
        current = self.model_dump_json()
        if current == self._last_serialized:
            return False
        self._last_serialized = current
        observer.notify_state_change(self)
        return True

    def serializable_copy(self) -> Self:
        """A detached copy of the same class (no observer, no baseline)."""
        return type(self).model_validate(self.model_dump())
