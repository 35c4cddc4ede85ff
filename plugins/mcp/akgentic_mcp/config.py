"""MCP connection configuration: one server, over streamable HTTP, SSE or stdio.

The transport is always the one configured (never guessed from a URL).

Credential-bearing fields are ``bearer_token``, every value of ``stdio_env`` and
the password of a ``url``'s user info.
They are secrets: masked in every dump (so in the event log, the console and
``team inspect``), never logged, and a mask reads back as nothing, so an inline
secret does not survive a resume. Secrets that must survive are named by host
variable instead (``bearer_token_env``, ``stdio_env_from``), read when the server
is reached, and only variables the operator listed in ``AKGENTIC_MCP_ALLOWED_ENV``
may be read (:func:`allowed_env_names`): a card cannot send, say, the host's
``OPENAI_API_KEY`` to a URL of its choosing. A stdio child gets a token only
through ``stdio_token_env_var``.
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SecretStr,
    Tag,
    field_serializer,
    field_validator,
    model_validator,
)

__all__ = [
    "ALLOWED_ENV_VAR",
    "EnvNotAllowedError",
    "MCPConnectionConfig",
    "MCPDiagnosticsConfig",
    "MCPHTTPConnectionConfig",
    "MCPStdioConnectionConfig",
    "allowed_env_names",
    "describe_server",
]

_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")
_MASK = "**********"
ALLOWED_ENV_VAR = "AKGENTIC_MCP_ALLOWED_ENV"
"""The operator's comma-separated list of host variables an ``mcp`` card may read."""


class EnvNotAllowedError(PermissionError):
    """A card names a host variable the operator did not allow (:data:`ALLOWED_ENV_VAR`)."""


def allowed_env_names() -> frozenset[str]:
    """The host variables cards may read: the names listed in ``$AKGENTIC_MCP_ALLOWED_ENV``."""
    listed = os.environ.get(ALLOWED_ENV_VAR, "")
    return frozenset(name.strip() for name in listed.split(",") if name.strip())


def read_allowed_env(name: str, field: str) -> str | None:
    """The host variable ``name``, read for ``field``; refused unless the operator allowed it.

    Raises:
        EnvNotAllowedError: naming the variable, the field and the setting.
    """
    if name not in allowed_env_names():
        raise EnvNotAllowedError(
            f"the mcp card's {field} names the host variable {name!r}, which the operator "
            f"has not allowed: list it in {ALLOWED_ENV_VAR} (comma-separated names) to let "
            "cards read it"
        )
    return os.environ.get(name) or None


def _is_mask(value: Any) -> bool:
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    return bool(value == _MASK)


class _Connection(BaseModel):
    """Fields every transport shares."""

    model_config = ConfigDict(extra="forbid")

    bearer_token: SecretStr | None = None
    bearer_token_env: str | None = None
    timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=300.0, gt=0)
    tool_prefix: str | None = None

    @field_validator("bearer_token", mode="before")
    @classmethod
    def _mask_reads_as_none(cls, value: Any) -> Any:
        return None if _is_mask(value) else value

    @field_serializer("bearer_token")
    def _masked(self, token: SecretStr | None) -> str | None:
        return None if token is None else _MASK

    @field_validator("tool_prefix")
    @classmethod
    def _check_prefix(cls, prefix: str | None) -> str | None:
        if prefix is not None and not _PREFIX.fullmatch(prefix):
            raise ValueError(
                f"tool_prefix {prefix!r} must be a letter then up to 31 letters, digits or '_'"
            )
        return prefix

    @model_validator(mode="after")
    def _one_token_source(self) -> _Connection:
        if self.bearer_token is not None and self.bearer_token_env is not None:
            raise ValueError("give bearer_token or bearer_token_env, not both")
        return self

    def host_variables(self) -> dict[str, str]:
        """The host variables this connection reads, each with the field that names it."""
        if self.bearer_token_env is None:
            return {}
        return {self.bearer_token_env: "bearer_token_env"}

    def check_allowed_env(self) -> None:
        """Raise :class:`EnvNotAllowedError` unless every variable read is allowed."""
        for name, field in self.host_variables().items():
            read_allowed_env(name, field)

    def token(self) -> str | None:
        """The bearer token in clear, read now (from the variable when one is named).

        Raises:
            EnvNotAllowedError: the variable named is not in ``$AKGENTIC_MCP_ALLOWED_ENV``.
        """
        if self.bearer_token is not None:
            return self.bearer_token.get_secret_value()
        if self.bearer_token_env is not None:
            return read_allowed_env(self.bearer_token_env, "bearer_token_env")
        return None


class MCPHTTPConnectionConfig(_Connection):
    """A server reached over HTTP: streamable HTTP (the default) or SSE.

    Attributes:
        url: Absolute ``http(s)`` URL of the server's endpoint.
        transport: ``"streamable-http"`` or ``"sse"``; always honoured.
    """

    url: str
    transport: Literal["streamable-http", "sse"] = "streamable-http"

    @field_validator("url")
    @classmethod
    def _absolute_http(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("url must be an absolute http(s) URL with a host")
        return _with_password(url, None) if parts.password == _MASK else url

    @field_serializer("url")
    def _masked_password(self, url: str) -> str:
        return url if urlsplit(url).password is None else _with_password(url, _MASK)


def _with_password(url: str, password: str | None) -> str:
    """``url`` with the password of its user info replaced (None: removed)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    user = parts.netloc.rpartition("@")[0].partition(":")[0]
    userinfo = user if password is None else f"{user}:{password}"
    return urlunsplit(parts._replace(netloc=f"{userinfo}@{host}"))


class MCPStdioConnectionConfig(_Connection):
    """A server run as a child process speaking MCP over its stdin and stdout.

    Attributes:
        stdio_command: The program to run (non-blank).
        stdio_args: Its arguments.
        stdio_env: Variables added to the child's safe default environment. Every
            value is a secret: masked in dumps, so it is not in the log and a resumed
            team's child does not get it (use ``stdio_env_from`` for what must survive).
        stdio_env_from: Variables added to the child's environment, each read from the
            host variable named (``{CHILD_NAME: HOST_NAME}``) when the child starts;
            every host name must be allowed by ``$AKGENTIC_MCP_ALLOWED_ENV``.
        stdio_cwd: Its working directory.
        stdio_token_env_var: The variable the token is passed in (required with a token).
    """

    transport: Literal["stdio"] = "stdio"
    stdio_command: str
    stdio_args: list[str] = Field(default_factory=list)
    stdio_env: dict[str, SecretStr | None] | None = None
    stdio_env_from: dict[str, str] | None = None
    stdio_cwd: str | None = None
    stdio_token_env_var: str | None = None

    @field_validator("stdio_env", mode="before")
    @classmethod
    def _masks_read_as_none(cls, env: Any) -> Any:
        if isinstance(env, dict):
            return {name: None if _is_mask(value) else value for name, value in env.items()}
        return env

    @field_serializer("stdio_env")
    def _masked_env(self, env: dict[str, SecretStr | None] | None) -> dict[str, str | None] | None:
        if env is None:
            return None
        return {name: None if value is None else _MASK for name, value in env.items()}

    @field_validator("stdio_env_from")
    @classmethod
    def _variable_names(cls, names: dict[str, str] | None) -> dict[str, str] | None:
        for child, host in (names or {}).items():
            if not child.isidentifier() or not host.isidentifier():
                raise ValueError(f"stdio_env_from {child!r}: {host!r} must map variable names")
        return names

    def host_variables(self) -> dict[str, str]:
        """The host variables this connection reads, each with the field that names it."""
        found = super().host_variables()
        for host in (self.stdio_env_from or {}).values():
            found.setdefault(host, "stdio_env_from")
        return found

    def given_env(self) -> tuple[dict[str, str], list[str]]:
        """The inline ``stdio_env`` in clear, and the names whose value was not stored."""
        given: dict[str, str] = {}
        lost: list[str] = []
        for name, value in (self.stdio_env or {}).items():
            if value is None:
                lost.append(name)
            else:
                given[name] = value.get_secret_value()
        return given, lost

    @field_validator("stdio_command")
    @classmethod
    def _non_blank(cls, command: str) -> str:
        if not command.strip():
            raise ValueError("stdio_command must not be blank")
        return command

    @field_validator("stdio_token_env_var")
    @classmethod
    def _identifier(cls, name: str | None) -> str | None:
        if name is not None and not name.isidentifier():
            raise ValueError(f"stdio_token_env_var {name!r} must be a variable name")
        return name

    @model_validator(mode="before")
    @classmethod
    def _token_needs_a_variable(cls, data: Any) -> Any:
        # Checked on the input, before a masked inline token reads back as None: a
        # dumped card (mask + variable) must load again, a variable alone must not.
        if isinstance(data, dict):
            has_token = data.get("bearer_token") is not None or data.get("bearer_token_env")
            if bool(has_token) != (data.get("stdio_token_env_var") is not None):
                raise ValueError(
                    "a stdio server gets its token only through stdio_token_env_var: give "
                    "both a token (bearer_token or bearer_token_env) and the variable, or "
                    "neither"
                )
        return data


def _transport_of(value: Any) -> str:
    if isinstance(value, dict):
        transport = value.get("transport")
        if transport is not None:
            return "stdio" if transport == "stdio" else "http"
        return "stdio" if "stdio_command" in value else "http"
    return "stdio" if isinstance(value, MCPStdioConnectionConfig) else "http"


MCPConnectionConfig = Annotated[
    Annotated[MCPHTTPConnectionConfig, Tag("http")]
    | Annotated[MCPStdioConnectionConfig, Tag("stdio")],
    Discriminator(_transport_of),
]
"""One server's connection: stdio when ``transport`` says so (or ``stdio_command`` is set)."""


class MCPDiagnosticsConfig(BaseModel):
    """Options of :func:`~akgentic_mcp.diagnostics.probe_mcp_connection`."""

    model_config = ConfigDict(extra="forbid")

    max_tools_to_print: int = Field(default=20, ge=1)


def describe_server(connection: MCPHTTPConnectionConfig | MCPStdioConnectionConfig) -> str:
    """How logs name a server: its command, or its URL without credentials or query."""
    if isinstance(connection, MCPStdioConnectionConfig):
        return f"stdio server {connection.stdio_command!r}"
    parts = urlsplit(connection.url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return f"{connection.transport} server {urlunsplit((parts.scheme, netloc, parts.path, '', ''))}"
