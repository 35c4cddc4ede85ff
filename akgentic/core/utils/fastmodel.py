"""Building pydantic model instances from trusted values, at C speed.

``object.__setattr__(model, "__dict__", ...)`` works but walks the generic
attribute machinery each time; the slot descriptors of ``BaseModel`` set the
same four slots directly. Only for values the runtime itself produced: nothing
here validates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

_T = TypeVar("_T")

__all__ = ["new_instance", "set_dict", "set_extra", "set_fields_set", "set_private"]

_slots = BaseModel.__dict__
set_dict: Callable[[Any, dict[str, Any]], None] = _slots["__dict__"].__set__
set_fields_set: Callable[[Any, set[str]], None] = _slots["__pydantic_fields_set__"].__set__
set_extra: Callable[[Any, dict[str, Any] | None], None] = _slots["__pydantic_extra__"].__set__
set_private: Callable[[Any, dict[str, Any] | None], None] = _slots["__pydantic_private__"].__set__
if TYPE_CHECKING:

    def new_instance(cls: type[_T], /) -> _T:
        """``object.__new__(cls)``: an instance with no slot set yet."""
        ...

else:
    new_instance = object.__new__
