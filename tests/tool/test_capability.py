"""``Capability`` / ``CapabilityCard``: one declaration, adapted to the tool and the command."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from pydantic import Field
from pydantic_ai import Tool

from akgentic.testing import ToolCardContract
from akgentic.tool import (
    COMMAND,
    SAME_AS_TOOL,
    TOOL_CALL,
    BaseToolParam,
    Capability,
    CapabilityCard,
    Channels,
    RestOfLine,
    RetriableError,
    ToolCard,
    ToolFactory,
)
from akgentic.tool.commands import CommandRegistry
from akgentic.tool.testing import RecordingObserver


class Add(BaseToolParam):
    """``add``: the same function for the model and for people."""

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL, COMMAND})
    start: int = 0


class Note(BaseToolParam):
    """``note``: a tool for the model, a rest-of-line command for people."""

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL, COMMAND})


class Forget(BaseToolParam):
    """``forget``: a tool only."""


class Dump(BaseToolParam):
    """``dump`` and ``dump_count``: commands only."""

    expose: set[Channels] = Field(default_factory=lambda: {COMMAND})


class _DumpCount(Dump):
    """Key of ``/dump_count``, the second command of the ``dump`` field."""


class NotesTool(CapabilityCard):
    """A small card declaring each kind of capability once."""

    add: Add | bool = True
    note: Note | bool = True
    forget: Forget | bool = True
    dump: Dump | bool = True

    def capabilities(self) -> list[Capability]:
        return [
            Capability("add", self._add, SAME_AS_TOOL),
            Capability("note", self._note_tool, self._note_command, name="take_note"),
            Capability("forget", self._forget),
            Capability("dump", command=self._dump),
            Capability("dump", command=self._dump_count, name="dump_count", command_key=_DumpCount),
        ]

    def _add(self, param: Add) -> Callable[..., int]:
        start = param.start

        def add(a: int, b: int = 1) -> int:
            """Add two numbers to the start value.

            Args:
                a: The first number.
                b: The second number.
            """
            if a < 0:
                raise RetriableError("a must not be negative")
            return start + a + b

        return add

    def _note_tool(self, param: Note) -> Callable[..., str]:
        def for_the_model(text: str, urgent: bool = False) -> str:
            """Keep a note for later.

            Args:
                text: The note.
                urgent: Mark it urgent.
            """
            return f"noted{' (urgent)' if urgent else ''}: {text}"

        return for_the_model

    def _note_command(self, param: Note) -> Callable[..., str]:
        def for_people(text: RestOfLine) -> str:
            """Keep a note (the rest of the line).

            Args:
                text: The note.
            """
            return f"noted: {text}"

        return for_people

    def _forget(self, param: Forget) -> Callable[..., str]:
        def forget() -> str:
            """Forget every note."""
            return "forgotten"

        return forget

    def _dump(self, param: Dump) -> Callable[..., str]:
        def dump() -> str:
            """Show every note."""
            return "no notes"

        return dump

    def _dump_count(self, param: Dump) -> Callable[..., str]:
        def dump_count() -> str:
            """Count the notes."""
            return "0"

        return dump_count


def _names(card: ToolCard) -> tuple[list[str], list[str]]:
    """Tool names and command names, as served."""
    commands = [(command, "NotesTool") for command in card.get_commands().values()]
    return [tool.__name__ for tool in card.get_tools()], CommandRegistry(commands).names()


def test_one_capability_gives_a_tool_and_a_command_that_agree() -> None:
    card = NotesTool(add=Add(start=10, instructions="Only for small numbers."))
    tool = next(tool for tool in card.get_tools() if tool.__name__ == "add")
    command = card.get_commands()[Add]

    assert command.__name__ == tool.__name__ == "add"
    assert command.__doc__ == tool.__doc__
    assert "Only for small numbers." in (tool.__doc__ or "")
    assert inspect.signature(command) == inspect.signature(tool)
    # What the model sees and what a person types describe the same parameters.
    schema = Tool(tool).function_schema.json_schema
    (descriptor,) = CommandRegistry([(command, "NotesTool")]).descriptors()
    assert list(schema["properties"]) == [arg.name for arg in descriptor.args] == ["a", "b"]
    assert [arg.description for arg in descriptor.args] == [
        schema["properties"][name]["description"] for name in ("a", "b")
    ]
    assert descriptor.description == (Tool(tool).description or "").splitlines()[0]
    # The param configured both surfaces.
    assert tool(1) == 12
    assert CommandRegistry([(command, "NotesTool")]).dispatch("/add 1 b=2") == "13"


def test_a_capability_on_one_surface_appears_only_there() -> None:
    both = {TOOL_CALL, COMMAND}
    tools, commands = _names(NotesTool(forget=Forget(expose=both), dump=Dump(expose=both)))
    assert "forget" in tools and "forget" not in commands
    assert "dump" in commands and "dump" not in tools
    assert tools == ["add", "take_note", "forget"]
    assert commands == ["add", "take_note", "dump", "dump_count"]


def test_the_param_expose_set_gates_each_surface() -> None:
    only_command = NotesTool(add=Add(expose={COMMAND}))
    assert "add" not in _names(only_command)[0]
    assert "add" in _names(only_command)[1]
    only_tool = NotesTool(add=Add(expose={TOOL_CALL}))
    assert "add" in _names(only_tool)[0]
    assert "add" not in _names(only_tool)[1]
    assert _names(NotesTool(add=False)) == (
        ["take_note", "forget"],
        ["take_note", "dump", "dump_count"],
    )
    # Exposing a surface the capability has no builder for serves nothing more.
    assert _names(NotesTool(forget=Forget(expose={COMMAND}))) == (
        ["add", "take_note"],
        ["add", "take_note", "dump", "dump_count"],
    )


def test_two_builders_serve_one_name_with_their_own_signatures() -> None:
    card = NotesTool(note=Note(instructions="Keep notes short."))
    tool = next(tool for tool in card.get_tools() if tool.__name__ == "take_note")
    command = card.get_commands()[Note]

    assert command.__name__ == "take_note"
    assert list(inspect.signature(tool).parameters) == ["text", "urgent"]
    assert list(inspect.signature(command).parameters) == ["text"]
    # Instructions are model guidance: the tool has them, a command of its own does not.
    assert "Keep notes short." in (tool.__doc__ or "")
    assert "Keep notes short." not in (command.__doc__ or "")
    registry = CommandRegistry([(command, "NotesTool")])
    assert registry.dispatch("/take_note buy milk, then eggs") == "noted: buy milk, then eggs"


def test_command_instructions_add_them_to_a_command_of_its_own() -> None:
    class Told(NotesTool):
        def capabilities(self) -> list[Capability]:
            return [
                Capability("note", self._note_tool, self._note_command, command_instructions=True)
            ]

    card = Told(note=Note(instructions="Keep notes short."))
    assert "Keep notes short." in (card.get_commands()[Note].__doc__ or "")


def test_a_second_command_of_one_field_is_keyed_by_its_command_key() -> None:
    commands = NotesTool().get_commands()
    assert commands[Dump].__name__ == "dump"
    assert commands[_DumpCount].__name__ == "dump_count"
    assert list(NotesTool(dump=False).get_commands()) == [Add, Note]
    # The key is the field's param class, even when the field holds a subclass of it.
    assert list(NotesTool(dump=_DumpCount()).get_commands()) == [Add, Note, Dump, _DumpCount]


def test_the_factory_serves_a_capability_card_like_any_card() -> None:
    class TryAgainError(Exception):
        pass

    factory = ToolFactory(
        [NotesTool()], observer=RecordingObserver(), retry_exception=TryAgainError
    )
    add = next(tool for tool in factory.get_tools() if tool.__name__ == "add")
    with pytest.raises(TryAgainError, match="must not be negative"):
        add(-1)
    registry = factory.get_command_registry()
    assert registry.dispatch("/add -1") == "Command 'add' failed: a must not be negative"
    assert registry.names() == ["add", "take_note", "dump", "dump_count"]


def test_a_capability_needs_a_surface_and_a_name() -> None:
    with pytest.raises(ValueError, match="neither a tool nor a command"):
        Capability("add")
    with pytest.raises(ValueError, match="SAME_AS_TOOL but no tool"):
        Capability("add", command=SAME_AS_TOOL)
    with pytest.raises(ValueError, match="identifier"):
        Capability("add", lambda param: print, name="two words")
    with pytest.raises(TypeError, match="command_key"):
        Capability("add", lambda param: print, command_key=int)  # type: ignore[arg-type]
    assert Capability("add", lambda param: print).name == "add"


def test_a_capability_on_a_field_that_is_not_a_param_is_refused() -> None:
    class Misspelled(NotesTool):
        def capabilities(self) -> list[Capability]:
            return [Capability("ad", self._add)]

    with pytest.raises(ValueError, match="'ad', which is not a field typed SomeParam"):
        Misspelled().get_tools()


def test_two_capabilities_serving_one_name_are_refused() -> None:
    class Twice(NotesTool):
        def capabilities(self) -> list[Capability]:
            return [Capability("add", self._add), Capability("forget", self._forget, name="add")]

    with pytest.raises(ValueError, match="two tools named 'add'"):
        Twice().get_tools()


def test_a_builder_must_return_a_function_it_can_rename() -> None:
    class Bound(NotesTool):
        def capabilities(self) -> list[Capability]:
            return [Capability("forget", lambda param: self.get_tools)]

    with pytest.raises(TypeError, match="cannot be renamed"):
        Bound().get_tools()


def test_a_capability_card_without_capabilities_is_abstract() -> None:
    class Empty(CapabilityCard):
        pass

    assert inspect.isabstract(Empty)
    with pytest.raises(TypeError):
        Empty()  # type: ignore[abstract]


def test_the_mechanism_is_public() -> None:
    import akgentic.tool
    import akgentic.tool.core

    for name in ("Capability", "CapabilityCard", "SAME_AS_TOOL", "serve_tools", "serve_commands"):
        assert name in akgentic.tool.__all__ and name in akgentic.tool.core.__all__
        assert getattr(akgentic.tool, name) is getattr(akgentic.tool.core, name)


class TestNotesToolContract(ToolCardContract):
    """A capability card keeps the whole card contract."""

    @pytest.fixture(params=["defaults", "configured"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "defaults":
            return NotesTool()
        return NotesTool(
            add=Add(start=3, instructions="Only for small numbers."),
            note=Note(instructions="Keep notes short."),
        )

    tool_arguments: ClassVar[dict[str, dict[str, Any]]] = {"add": {"a": 1}}
