"""Building pydantic model instances from trusted values, at C speed.

``object.__setattr__(model, "__dict__", ...)`` works but walks the generic
attribute machinery each time; the slot descriptors of ``BaseModel`` set the
same four slots directly. Only for values the runtime itself produced: nothing
here validates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from pydantic import BaseModel

_T = TypeVar("_T")

__all__ = [
    "SharedFieldsSet",
    "copy_fields_set",
    "get_fields_set",
    "new_instance",
    "own_fields_set",
    "set_dict",
    "set_extra",
    "set_fields_set",
    "set_private",
]

_slots = BaseModel.__dict__
set_dict: Callable[[Any, dict[str, Any]], None] = _slots["__dict__"].__set__
set_fields_set: Callable[[Any, set[str]], None] = _slots["__pydantic_fields_set__"].__set__
get_fields_set: Callable[[Any], set[str]] = _slots["__pydantic_fields_set__"].__get__
set_extra: Callable[[Any, dict[str, Any] | None], None] = _slots["__pydantic_extra__"].__set__
set_private: Callable[[Any, dict[str, Any] | None], None] = _slots["__pydantic_private__"].__set__
if TYPE_CHECKING:

    def new_instance(cls: type[_T], /) -> _T:
        """``object.__new__(cls)``: an instance with no slot set yet."""
        ...

else:
    new_instance = object.__new__


class SharedFieldsSet(set[str]):
    """A read-only ``model_fields_set`` shared by many trusted instances.

    Telemetry built by the runtime always sets the same fields, so one set
    serves every instance instead of one fresh set each. It compares, iterates
    and hashes its members like the ``set`` it stands for; copies
    (``copy.copy``, ``.copy()``, set operators, ``model_copy``) are ordinary
    mutable sets. Mutating it in place raises ``TypeError``: a model holding
    one swaps in a private copy first (:func:`own_fields_set`), which
    ``Message.__setattr__`` does before any assignment.
    """

    __slots__ = ()

    def __init__(self, names: Iterable[str] = ()) -> None:
        super().__init__(names)

    def _read_only(self, *args: Any) -> NoReturn:
        raise TypeError("a shared fields set is read-only; copy it first")

    add = discard = remove = pop = clear = _read_only
    update = difference_update = intersection_update = symmetric_difference_update = _read_only
    __ior__ = __iand__ = __isub__ = __ixor__ = _read_only

    def __repr__(self) -> str:
        return repr(set(self))

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: Any) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # Unpickled instances stay shared (pickle memoises them) and read-only.
        return (type(self), (list(self),))


def copy_fields_set(fields_set: set[str]) -> set[str]:
    """The fields set for a copy of a model: a shared set is reused, others copied."""
    return fields_set if type(fields_set) is SharedFieldsSet else set(fields_set)


def own_fields_set(model: Any) -> None:
    """Give ``model`` a private, mutable copy of its fields set if it shares one."""
    try:
        fields_set = get_fields_set(model)
    except AttributeError:  # not initialised yet
        return
    if type(fields_set) is SharedFieldsSet:
        set_fields_set(model, set(fields_set))
