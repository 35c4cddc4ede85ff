"""How a run asks the model for its final output, and how it reads the answer.

:class:`OutputSpec` turns an output type into pydantic-ai request parameters — plain
text, an output tool named ``final_result``, or native JSON-schema output — and
validates what comes back. Specs are shared per (type, mode), because generating the
JSON schema is the costly part.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import threading
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.output import OutputObjectDefinition
from pydantic_ai.tools import ToolDefinition

__all__ = ["FINAL_RESULT_TOOL", "OutputSpec"]

FINAL_RESULT_TOOL = "final_result"
_WRAPPED = "response"


@dataclasses.dataclass(frozen=True)
class OutputSpec:
    """How a run asks for its final output and how it reads it.

    ``str`` is plain text. Any other type is structured: with ``native`` the model
    is asked to answer in JSON matching the schema (``response_format``), otherwise
    it gets an output tool named ``final_result``; in both modes text that
    validates is accepted as well. A type whose JSON schema is not an object is
    wrapped in ``{"response": ...}`` on the wire.
    """

    output_type: Any
    native: bool
    adapter: TypeAdapter[Any] | None
    wrapped: bool
    object_def: OutputObjectDefinition | None
    tool_def: ToolDefinition | None

    @property
    def structured(self) -> bool:
        """False for plain text output."""
        return self.adapter is not None

    def parameters(self, function_tools: list[ToolDefinition]) -> ModelRequestParameters:
        """The request parameters for one model request."""
        if not self.structured:
            return ModelRequestParameters(
                function_tools=function_tools, output_mode="text", allow_text_output=True
            )
        if self.native:
            return ModelRequestParameters(
                function_tools=function_tools,
                output_mode="native",
                output_object=self.object_def,
                allow_text_output=True,
            )
        assert self.tool_def is not None
        return ModelRequestParameters(
            function_tools=function_tools,
            output_mode="tool",
            output_tools=[self.tool_def],
            allow_text_output=False,
        )

    def parse_text(self, text: str) -> Any:
        """The output in ``text`` (JSON, possibly inside a Markdown fence or prose).

        When the output type has a ``merge(outputs)`` class method (see
        :class:`~akgentic.llm.output.MergeableOutput`) and the text is several JSON
        objects back to back, each is validated and the results merged.
        """
        try:
            return self._validate_json(text)
        except ValidationError:
            merged = self._merge_objects(text)
            if merged is not None:
                return merged
            start, end = text.find("{"), text.rfind("}")
            if start < 0 or end <= start or (start == 0 and end == len(text) - 1):
                raise
            return self._validate_json(text[start : end + 1])

    def _merge_objects(self, text: str) -> Any:
        """The merge of back-to-back JSON objects in ``text``, or None."""
        merge = getattr(self.output_type, "merge", None)
        if not callable(merge) or self.adapter is None:
            return None
        decoder = json.JSONDecoder()
        objects: list[Any] = []
        index, size = 0, len(text)
        while index < size:
            if text[index].isspace():
                index += 1
                continue
            try:
                value, index = decoder.raw_decode(text, index)
            except ValueError:
                return None
            objects.append(value)
        if len(objects) < 2:
            return None
        return merge([self.adapter.validate_python(value) for value in objects])

    def parse_call(self, call: ToolCallPart) -> Any:
        """The output carried by an output-tool call's arguments."""
        args = call.args if isinstance(call.args, str | None) else call.args_as_dict()
        if isinstance(args, dict):
            assert self.adapter is not None
            value = args
            if self.wrapped:
                value = args.get(_WRAPPED, args)
            return self.adapter.validate_python(value)
        return self._validate_json(args or "{}")

    def _validate_json(self, text: str) -> Any:
        assert self.adapter is not None
        if not self.wrapped:
            return self.adapter.validate_json(text)
        try:
            envelope = json.loads(text)
        except ValueError:
            return self.adapter.validate_json(text)  # raises the ValidationError the model reads
        if isinstance(envelope, dict) and _WRAPPED in envelope:
            return self.adapter.validate_python(envelope[_WRAPPED])
        return self.adapter.validate_python(envelope)

    @staticmethod
    def for_type(output_type: Any, *, native: bool) -> OutputSpec:
        """The spec for ``output_type``, shared: building the JSON schema is the costly part.

        ``native`` asks for JSON-schema output instead of an output tool.
        """
        key = (output_type, native)
        try:
            with _spec_lock:
                cached = _specs.get(key)
        except TypeError:  # an unhashable output type: build every time
            return _build_spec(output_type, native)
        if cached is None:
            cached = _build_spec(output_type, native)
            with _spec_lock:
                _specs[key] = cached
        return cached


_spec_lock = threading.Lock()
_specs: dict[tuple[Any, bool], OutputSpec] = {}


def _build_spec(output_type: Any, native: bool) -> OutputSpec:
    if output_type is None or output_type is str:
        return OutputSpec(str, False, None, False, None, None)
    adapter: TypeAdapter[Any] = TypeAdapter(output_type)
    schema = adapter.json_schema()
    wrapped = schema.get("type") != "object"
    if wrapped:
        schema = {
            "type": "object",
            "properties": {_WRAPPED: schema},
            "required": [_WRAPPED],
        }
    name = getattr(output_type, "__name__", None)
    doc = inspect.getdoc(output_type) if inspect.isclass(output_type) else None
    description = doc if doc and output_type.__doc__ is not None else None
    if native:
        return OutputSpec(
            output_type,
            True,
            adapter,
            wrapped,
            OutputObjectDefinition(
                json_schema=schema, name=name, description=description, strict=True
            ),
            None,
        )
    tool = ToolDefinition(
        name=FINAL_RESULT_TOOL,
        parameters_json_schema=schema,
        description=description or "The final response which ends this conversation",
        kind="output",
    )
    return OutputSpec(output_type, False, adapter, wrapped, None, tool)
