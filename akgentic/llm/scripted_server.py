"""An offline OpenAI-compatible server that plays a script.

Tests point a real OpenAI client at this server instead of the internet, through
``ModelConfig(provider="openai-chat", base_url=...)`` (Chat Completions) or
``ModelConfig(provider="openai", base_url=...)`` / ``OPENAI_BASE_URL`` (the Responses
API, what pydantic-ai uses for plain ``openai``). Both ``/v1/chat/completions`` and
``/v1/responses`` consume the next step of the same script; every request body is
recorded, in arrival order, so a test can check what the model was sent (chat bodies
carry ``messages``, Responses bodies ``input`` and ``instructions``). Streaming
(``"stream": true``, server-sent events) and plain JSON replies are served by both.

    with ScriptedLLMServer([tool_call("lookup", {"q": "x"}), text("done")]) as server:
        agent = ReactAgent(ReactAgentConfig(model_cfg=server.model_config()))
        ...
        assert server.requests[1]["messages"][-1]["role"] == "tool"

Steps are built with :func:`text`, :func:`tool_call`, :func:`tool_calls`,
:func:`structured` and :func:`error`; a plain string is a text step and a
callable ``(request_body) -> Step`` decides at request time. A request that
finds the script used up gets the ``fallback`` step when one is set (a callable
fallback makes a small rule-based model), otherwise an HTTP 400 whose message
says so.

Fault modes, for a model or server that misbehaves: :func:`server_error` (5xx),
:func:`unknown_tool`, :func:`malformed_arguments`, :func:`wrongly_typed_arguments`,
:func:`prose` (text where JSON was asked for), :func:`truncated`
(``finish_reason="length"``) and :func:`context_length_exceeded` (the 400 of a
prompt longer than the context).

Only the standard library is used; the server binds 127.0.0.1 on a free port
and runs in a daemon thread.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from akgentic.llm.config import ModelConfig

__all__ = [
    "ScriptStep",
    "ScriptedLLMServer",
    "StepSpec",
    "ToolCallSpec",
    "context_length_exceeded",
    "error",
    "malformed_arguments",
    "prose",
    "server_error",
    "structured",
    "text",
    "tool_call",
    "tool_calls",
    "truncated",
    "unknown_tool",
    "wrongly_typed_arguments",
]

DEFAULT_MODEL = "scripted-model"


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call in a reply: the tool name and its JSON arguments."""

    name: str
    arguments: dict[str, Any] | str
    id: str | None = None

    def arguments_json(self) -> str:
        """The arguments as the JSON text the API carries."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(frozen=True)
class ScriptStep:
    """One scripted reply: text and/or tool calls, or an HTTP error."""

    content: str | None = None
    tool_calls: tuple[ToolCallSpec, ...] = ()
    status: int = 200
    error_message: str | None = None
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens)
    finish_reason: str | None = None
    #: The whole JSON body of an error reply, when the OpenAI shape is not the one wanted.
    error_body: dict[str, Any] | None = None


StepSpec: TypeAlias = ScriptStep | str | Callable[[dict[str, Any]], "ScriptStep | str"]


def text(content: str, *, usage: tuple[int, int] | None = None) -> ScriptStep:
    """A plain assistant text reply."""
    return ScriptStep(content=content, usage=usage)


def tool_call(
    name: str,
    arguments: dict[str, Any] | str | None = None,
    *,
    id: str | None = None,
    usage: tuple[int, int] | None = None,
) -> ScriptStep:
    """A reply calling one tool with ``arguments`` (a dict, or raw JSON text)."""
    return ScriptStep(tool_calls=(ToolCallSpec(name, arguments or {}, id),), usage=usage)


def tool_calls(
    *calls: tuple[str, dict[str, Any] | str] | ToolCallSpec,
    content: str | None = None,
    usage: tuple[int, int] | None = None,
) -> ScriptStep:
    """A reply calling several tools at once (optionally with some text next to them)."""
    specs = tuple(c if isinstance(c, ToolCallSpec) else ToolCallSpec(c[0], c[1]) for c in calls)
    return ScriptStep(content=content, tool_calls=specs, usage=usage)


def structured(value: Any, *, usage: tuple[int, int] | None = None) -> ScriptStep:
    """A structured-output reply: ``value`` (a dict or a pydantic model) as JSON text.

    This is what a model with native structured output (``response_format``)
    returns. For tool-based output, script ``tool_call("final_result", {...})``.
    """
    dump = getattr(value, "model_dump", None)
    data = dump(mode="json") if callable(dump) else value
    return ScriptStep(content=json.dumps(data), usage=usage)


def error(status: int = 500, message: str = "scripted failure") -> ScriptStep:
    """An HTTP error reply (OpenAI error body). Note the client retries 429 and 5xx."""
    return ScriptStep(status=status, error_message=message)


# ------------------------------------------------------------------ fault modes
# Replies a misbehaving model or server gives; each is a plain step, so it goes in a
# script anywhere a reply does.


def server_error(status: int = 500, message: str = "internal server error") -> ScriptStep:
    """An HTTP 5xx reply (the OpenAI client retries these up to its ``max_retries``)."""
    if not 500 <= status <= 599:
        raise ValueError(f"server_error takes a 5xx status, not {status}")
    return error(status, message)


def unknown_tool(name: str = "no_such_tool", arguments: dict[str, Any] | None = None) -> ScriptStep:
    """A call to a tool the agent does not have."""
    return tool_call(name, arguments or {})


def malformed_arguments(name: str, raw: str = '{"content": "unterminated') -> ScriptStep:
    """A call to ``name`` whose argument text is not valid JSON."""
    return tool_call(name, raw)


def wrongly_typed_arguments(name: str, arguments: dict[str, Any]) -> ScriptStep:
    """A call to ``name`` with well-formed JSON of the wrong types (e.g. a list for a string)."""
    return tool_call(name, arguments)


def prose(content: str = "Sure! I will get right on it and report back soon.") -> ScriptStep:
    """Plain prose, for a request that asked for JSON (structured output)."""
    return text(content)


def truncated(content: str, *, keep: int | None = None, tool: str | None = None) -> ScriptStep:
    """A reply cut off by the output-token cap: ``finish_reason="length"``.

    The first ``keep`` characters of ``content`` (half by default) are sent: as text, or
    with ``tool`` as that tool call's (now broken) JSON arguments.
    """
    cut = content[: len(content) // 2 if keep is None else keep]
    if tool is not None:
        return ScriptStep(tool_calls=(ToolCallSpec(tool, cut),), finish_reason="length")
    return ScriptStep(content=cut, finish_reason="length")


def context_length_exceeded(
    prompt_tokens: int = 10119, context: int = 2048, *, server: str = "llama.cpp"
) -> ScriptStep:
    """The HTTP 400 an OpenAI-compatible server answers when the prompt exceeds its context.

    ``server`` picks the body: ``"llama.cpp"`` (``exceed_context_size_error`` with
    ``n_prompt_tokens`` and ``n_ctx``), ``"vllm"`` or ``"openai"`` (the sentence naming
    both numbers, ``code: context_length_exceeded`` for OpenAI).
    """
    if server == "llama.cpp":
        body: dict[str, Any] = {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": prompt_tokens,
                "n_ctx": context,
            }
        }
    elif server in ("vllm", "openai"):
        message = (
            f"This model's maximum context length is {context} tokens. However, you "
            f"requested {prompt_tokens} tokens in the messages. Please reduce the length "
            "of the messages."
        )
        kind = "BadRequestError" if server == "vllm" else "invalid_request_error"
        code: Any = 400 if server == "vllm" else "context_length_exceeded"
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    else:
        raise ValueError(f"unknown server flavour {server!r}: llama.cpp, vllm or openai")
    return ScriptStep(status=400, error_message=body["error"]["message"], error_body=body)


def _estimate_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


class ScriptedLLMServer:
    """An OpenAI-compatible server on 127.0.0.1 replaying a script of replies.

    Use it as a context manager (or call :meth:`start` / :meth:`stop`). Add
    steps at any time with :meth:`add`. ``requests`` holds every received
    request body (chat completions and responses alike), in arrival order.
    """

    #: The context size this server has (None: unlimited); see :func:`with_context`.
    n_ctx: int | None = None
    #: How it tells its context and refuses a larger prompt: "llama.cpp" or "vllm".
    context_flavour: str = "llama.cpp"

    def __init__(
        self,
        script: Iterable[StepSpec] = (),
        *,
        model: str = DEFAULT_MODEL,
        host: str = "127.0.0.1",
        port: int = 0,
        fallback: StepSpec | None = None,
    ) -> None:
        self.model = model
        #: Played (without being used up) when the script is empty; None: HTTP 400.
        self.fallback = fallback
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._script: deque[StepSpec] = deque(script)
        self._served = 0
        self._ids = itertools.count(1)
        self.requests: list[dict[str, Any]] = []
        #: The HTTP headers of every POST, in arrival order (what a key reached).
        self.request_headers: list[dict[str, str]] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()

    # --------------------------------------------------------------- script

    def add(self, *steps: StepSpec) -> ScriptedLLMServer:
        """Append steps to the script; returns the server for chaining."""
        with self._lock:
            self._script.extend(steps)
        return self

    @property
    def remaining(self) -> int:
        """How many scripted steps are still unplayed."""
        with self._lock:
            return len(self._script)

    @property
    def served(self) -> int:
        """How many requests have been answered from the script."""
        with self._lock:
            return self._served

    def _next_step(self, body: dict[str, Any]) -> ScriptStep | None:
        with self._lock:
            self.requests.append(body)
            if self._script:
                spec = self._script.popleft()
            elif self.fallback is not None:
                spec = self.fallback
            else:
                return None
            self._served += 1
        if callable(spec) and not isinstance(spec, ScriptStep):
            spec = spec(body)
        return text(spec) if isinstance(spec, str) else spec

    # ------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (the server must be started)."""
        if self._httpd is None:
            raise RuntimeError("the scripted LLM server is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url`` of this server (``<url>/v1``)."""
        return f"{self.url}/v1"

    def model_config(self, **overrides: Any) -> ModelConfig:
        """A ``ModelConfig`` for this server: Chat Completions unless ``provider="openai"``."""
        from akgentic.llm.config import ModelConfig

        fields: dict[str, Any] = {
            "provider": "openai-chat",
            "model": self.model,
            "base_url": self.base_url,
            "api_key": "scripted",
        }
        fields.update(overrides)
        return ModelConfig(**fields)

    def start(self) -> ScriptedLLMServer:
        """Bind and serve in a daemon thread (idempotent)."""
        if self._httpd is not None:
            return self
        self._closing.clear()
        handler = type("_BoundHandler", (_Handler,), {"server_ref": self})
        self._httpd = ThreadingHTTPServer((self._host, self._port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},  # bounds how long stop() waits
            name="scripted-llm-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        self._closing.set()
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _stall(self, step: StalledStep) -> bool:
        """Wait out a slow or hung step; False when the request must go unanswered."""
        if step.hang:
            self._closing.wait()
            return False
        return step.delay <= 0 or not self._closing.wait(step.delay)

    # ------------------------------------------------------------- replies

    def completion(self, body: dict[str, Any], step: ScriptStep) -> dict[str, Any]:
        """The non-streaming chat-completion JSON for ``step``."""
        message: dict[str, Any] = {"role": "assistant", "content": step.content}
        calls = self._tool_call_payloads(step)
        if calls:
            message["tool_calls"] = calls
        prompt, completion = self._usage(body, step)
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": step.finish_reason or ("tool_calls" if calls else "stop"),
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def chunks(self, body: dict[str, Any], step: ScriptStep) -> Iterator[dict[str, Any]]:
        """The streaming chunks for ``step`` (role, content, tool calls, finish, usage)."""
        base = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        yield chunk({"role": "assistant", "content": ""})
        if step.content:
            # Two pieces, so clients really assemble a streamed text.
            half = len(step.content) // 2 or len(step.content)
            yield chunk({"content": step.content[:half]})
            if step.content[half:]:
                yield chunk({"content": step.content[half:]})
        calls = self._tool_call_payloads(step)
        for index, call in enumerate(calls):
            yield chunk({"tool_calls": [{"index": index, **call}]})
        yield chunk({}, step.finish_reason or ("tool_calls" if calls else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            prompt, completion = self._usage(body, step)
            yield {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            }

    def _tool_call_payloads(self, step: ScriptStep) -> list[dict[str, Any]]:
        return [
            {
                "id": call.id or f"call_{next(self._ids)}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json()},
            }
            for call in step.tool_calls
        ]

    @staticmethod
    def _usage(body: dict[str, Any], step: ScriptStep) -> tuple[int, int]:
        if step.usage is not None:
            return step.usage
        out = (step.content or "") + "".join(c.arguments_json() for c in step.tool_calls)
        sent = body.get("messages", [body.get("instructions"), body.get("input")])
        return _estimate_tokens(sent), max(1, len(out) // 4)

    # ------------------------------------------------------ Responses API

    def _response_items(self, step: ScriptStep) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if step.content is not None:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{next(self._ids)}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": step.content, "annotations": []}],
                }
            )
        for call in step.tool_calls:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{next(self._ids)}",
                    "call_id": call.id or f"call_{next(self._ids)}",
                    "name": call.name,
                    "arguments": call.arguments_json(),
                    "status": "completed",
                }
            )
        return items

    def _response_envelope(
        self, body: dict[str, Any], step: ScriptStep, rid: str, output: list[dict[str, Any]]
    ) -> dict[str, Any]:
        prompt, completion = self._usage(body, step)
        return {
            "id": rid,
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": body.get("model") or self.model,
            "output": output,
            "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
            "tool_choice": body.get("tool_choice") or "auto",
            "tools": body.get("tools") or [],
            "usage": {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + completion,
            },
        }

    def response(self, body: dict[str, Any], step: ScriptStep) -> dict[str, Any]:
        """The non-streaming Responses API object for ``step``."""
        rid = f"resp_{next(self._ids)}"
        return self._response_envelope(body, step, rid, self._response_items(step))

    def response_events(self, body: dict[str, Any], step: ScriptStep) -> Iterator[dict[str, Any]]:
        """The Responses API stream for ``step``: created, items with deltas, completed."""
        rid = f"resp_{next(self._ids)}"
        items = self._response_items(step)
        seq = itertools.count()

        def event(kind: str, **fields: Any) -> dict[str, Any]:
            return {"type": kind, "sequence_number": next(seq), **fields}

        pending = {**self._response_envelope(body, step, rid, []), "status": "in_progress"}
        yield event("response.created", response=pending)
        for index, item in enumerate(items):
            if item["type"] == "message":
                text_value = item["content"][0]["text"]
                yield event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "content": []},
                )
                part = {"type": "output_text", "text": "", "annotations": []}
                where = {"item_id": item["id"], "output_index": index, "content_index": 0}
                yield event("response.content_part.added", part=part, **where)
                half = len(text_value) // 2 or len(text_value)
                for piece in (text_value[:half], text_value[half:]):
                    if piece:
                        yield event("response.output_text.delta", delta=piece, logprobs=[], **where)
                yield event("response.output_text.done", text=text_value, logprobs=[], **where)
                yield event(
                    "response.content_part.done", part={**part, "text": text_value}, **where
                )
            else:
                yield event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "arguments": "", "status": "in_progress"},
                )
                where = {"item_id": item["id"], "output_index": index}
                yield event(
                    "response.function_call_arguments.delta", delta=item["arguments"], **where
                )
                yield event(
                    "response.function_call_arguments.done",
                    arguments=item["arguments"],
                    name=item["name"],
                    **where,
                )
            yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed", response=self._response_envelope(body, step, rid, items))


class _Handler(BaseHTTPRequestHandler):
    server_ref: ScriptedLLMServer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str) -> None:
        self._json(status, {"error": {"message": message, "type": kind, "code": kind}})

    def do_GET(self) -> None:
        if _serve_context_get(self):
            return
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            model = self.server_ref.model
            self._json(200, {"object": "list", "data": [{"id": model, "object": "model"}]})
        else:
            self._error(404, f"no such path {self.path}", "not_found")

    def do_POST(self) -> None:
        if _serve_ollama_show(self):
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/responses", "/responses"):
            api = "responses"
        elif path in ("/v1/chat/completions", "/chat/completions"):
            api = "chat"
        else:
            self._error(
                404,
                f"the scripted server serves /v1/chat/completions and /v1/responses, "
                f"not {self.path}",
                "not_found",
            )
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError as exc:
            self._error(400, f"request body is not JSON: {exc}", "invalid_request_error")
            return
        server = self.server_ref
        with server._lock:
            server.request_headers.append({k.lower(): v for k, v in self.headers.items()})
        if _refuse_overflow(self, body):
            return
        step = server._next_step(body)
        if isinstance(step, StalledStep) and not server._stall(step):
            return  # a hung request: dropped without a reply once the server closes
        if step is None:
            self._error(
                400,
                f"scripted LLM server: the script is exhausted ({server.served} step(s) played); "
                f"request #{len(server.requests)} has no reply",
                "script_exhausted",
            )
            return
        if step.status != 200 and step.error_body is not None:
            self._json(step.status, step.error_body)
            return
        if step.status != 200:
            self._error(step.status, step.error_message or "scripted failure", "scripted_error")
            return
        if api == "responses":
            if body.get("stream"):
                self._stream(server.response_events(body, step), named=True)
            else:
                self._json(200, server.response(body, step))
        elif body.get("stream"):
            self._stream(server.chunks(body, step))
        else:
            self._json(200, server.completion(body, step))

    def _stream(self, chunks: Iterator[dict[str, Any]], *, named: bool = False) -> None:
        """Server-sent events; ``named`` adds ``event:`` lines and no ``[DONE]`` (Responses)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in chunks:
            head = f"event: {chunk['type']}\n".encode() if named else b""
            self.wfile.write(head + b"data: " + json.dumps(chunk).encode("utf-8") + b"\n\n")
        if not named:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


# ------------------------------------------------------- slow and hung steps


@dataclass(frozen=True)
class StalledStep(ScriptStep):
    """A step answered late (``delay`` seconds) or never (``hang``, until the server stops)."""

    delay: float = 0.0
    hang: bool = False


def delayed(seconds: float, step: StepSpec = "") -> StalledStep:
    """``step`` (a text step by default) answered after ``seconds`` (cut short by :meth:`stop`)."""
    base = text(step) if isinstance(step, str) else step
    if not isinstance(base, ScriptStep):
        raise TypeError("delayed() takes a ScriptStep or a string, not a callable")
    fields = {name: getattr(base, name) for name in ScriptStep.__dataclass_fields__}
    return StalledStep(**fields, delay=seconds)


def hang() -> StalledStep:
    """A request the server accepts and never answers; the connection drops at :meth:`stop`."""
    return StalledStep(hang=True)


__all__ += ["StalledStep", "delayed", "hang"]


# ------------------------------------------------------- context size


def with_context(
    server: ScriptedLLMServer, n_ctx: int, *, flavour: str = "llama.cpp"
) -> ScriptedLLMServer:
    """Give ``server`` a context of ``n_ctx`` tokens, told and enforced like ``flavour``'s.

    ``"llama.cpp"`` serves ``GET /props`` (``default_generation_settings.n_ctx``) and
    ``meta.n_ctx_train`` in ``/v1/models``; ``"vllm"`` serves ``max_model_len`` in
    ``/v1/models``; ``"ollama"`` answers ``POST /api/show`` with
    ``model_info["scripted.context_length"]`` (and refuses like llama.cpp, which
    Ollama itself does not: it truncates). A request whose messages come to more
    than ``n_ctx`` tokens (about four JSON characters per token) is recorded in
    ``requests`` and answered with that server's :func:`context_length_exceeded` 400,
    without using up a script step.
    """
    if flavour not in ("llama.cpp", "vllm", "ollama"):
        raise ValueError(f"unknown server flavour {flavour!r}: llama.cpp, vllm or ollama")
    server.n_ctx = n_ctx
    server.context_flavour = flavour
    return server


def _serve_context_get(handler: _Handler) -> bool:
    """Answer ``/props`` and ``/v1/models`` with the context size; False when not ours."""
    server = handler.server_ref
    if server.n_ctx is None or server.context_flavour == "ollama":
        return False
    path = handler.path.split("?", 1)[0].rstrip("/")
    llama = server.context_flavour == "llama.cpp"
    if path == "/props" and llama:
        handler._json(200, {"default_generation_settings": {"n_ctx": server.n_ctx}})
        return True
    if path in ("/v1/models", "/models"):
        entry: dict[str, Any] = {"id": server.model, "object": "model"}
        if llama:
            entry["meta"] = {"n_ctx_train": server.n_ctx}
        else:
            entry["max_model_len"] = server.n_ctx
        handler._json(200, {"object": "list", "data": [entry]})
        return True
    return False


def _refuse_overflow(handler: _Handler, body: dict[str, Any]) -> bool:
    """Record and refuse a request larger than the server's context; False when it fits."""
    server = handler.server_ref
    if server.n_ctx is None:
        return False
    tokens = _estimate_tokens(body.get("messages") or body.get("input") or [])
    if tokens <= server.n_ctx:
        return False
    with server._lock:
        server.requests.append(body)
    flavour = "vllm" if server.context_flavour == "vllm" else "llama.cpp"
    step = context_length_exceeded(tokens, server.n_ctx, server=flavour)
    assert step.error_body is not None
    handler._json(step.status, step.error_body)
    return True


def _serve_ollama_show(handler: _Handler) -> bool:
    """Answer Ollama's ``POST /api/show`` with the context size; False when not ours."""
    server = handler.server_ref
    path = handler.path.split("?", 1)[0].rstrip("/")
    if server.n_ctx is None or server.context_flavour != "ollama" or path != "/api/show":
        return False
    length = int(handler.headers.get("Content-Length") or 0)
    handler.rfile.read(length)
    info = {"general.architecture": "scripted", "scripted.context_length": server.n_ctx}
    handler._json(200, {"model_info": info, "parameters": ""})
    return True


__all__ += ["with_context"]
