"""MCP servers as sources of tools and prompts: the one adapter of the ``mcp`` SDK.

.. code-block:: python

    @mcp_server
    @staticmethod
    def orders() -> ResourceDescriptor:
        return ResourceDescriptor(MCPServer, endpoint="http://127.0.0.1:8765/mcp",
                                  bearer_token=os.environ["ORDERS_TOKEN"])

    @action(InputEvent)
    @staticmethod
    async def answer(event, ctx):
        orders = ctx.get_resource("orders", ResourceType.MCP_SERVER)
        reply = await ctx.chat(event.input, model="assistant", tools=orders.tools())

An :class:`MCPServer` connects when the operator opens (a server that cannot be
reached then fails the job at start, like any resource), reads the server's
tools and prompts, and keeps one session for all calls. Its tools are
:class:`~flink_agents_ltm.api.tools.Tool` values, so ``ctx.chat`` runs each of
their calls as a durable call (recorded in action state, not made again on
replay, bounded by ``agents.durable-async.timeout-ms``); its prompts are
:class:`~flink_agents_ltm.api.prompts.Prompt` values.

Threading: the SDK is asyncio; the runtime calls tools from its worker threads.
Each server owns one event-loop thread that holds the session; a call from any
thread is submitted to that loop (``asyncio.run_coroutine_threadsafe``) and
waited for, at most ``timeout`` seconds. Calls from many threads share the
session (MCP multiplexes requests by id). When the connection breaks (the server
exited, the HTTP endpoint went away) the call fails and the next one connects
again. Every error is one line naming the server and the tool, with the
server's secrets (headers, bearer token, API key, secret-named ``env``) masked.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from flink_agents_ltm.api.chat_models import ChatMessage, MessageRole
from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.prompts import Prompt
from flink_agents_ltm.api.redaction import MASK, MaskedError, is_secret_key
from flink_agents_ltm.api.resources import Resource, ResourceLookup
from flink_agents_ltm.api.tools import Tool
from flink_agents_ltm.integrations.extras import require_extra

__all__ = ["MCPServer", "MCPServerError", "MCPTool", "MCPToolError"]

log = logging.getLogger(__name__)

T = TypeVar("T")

CLOSE_WAIT_S = 5.0
LISTING = "listing tools and prompts"


class MCPServerError(MaskedError, FlinkAgentsLtmError, RuntimeError):
    """An MCP server could not be reached, broke off, or did not answer in time."""


class MCPToolError(MCPServerError):
    """An MCP tool answered with an error (or its call failed)."""


@dataclass(frozen=True)
class _Listing:
    tools: dict[str, Any]  # name -> mcp Tool
    prompts: dict[str, Any]  # name -> mcp Prompt


class MCPServer(Resource):
    """An MCP server reached over stdio (``command`` + ``args``: the server runs as a
    child process) or streamable HTTP (``endpoint``).

    ``headers``, ``bearer_token`` (sent as ``Authorization: Bearer ...``) and
    ``api_key`` (sent in ``api_key_header``) authenticate HTTP requests (or
    ``bearer_token_env`` / ``api_key_env``: the names of environment variables that hold
    them, read where the resource is built, so no secret is in the job); ``env``
    is given to a stdio server's process. ``timeout`` (seconds) bounds each request
    and ``connect_timeout`` starting a session (a stdio server starts a process); a
    tool call run by ``ctx.chat`` is also bounded by ``agents.durable-async.timeout-ms``.
    ``connect_at_open=False`` lets the operator open while the server is down: the
    first use connects, and until the server is up each use fails with a one-line error
    naming the server and the tool (by default a server down at open fails the job at
    start, like any resource). ``name`` names the server in errors (by default the name
    the server gives itself, else its endpoint or command).
    """

    def __init__(self, *, endpoint: str | None = None, command: str | None = None,
                 args: Sequence[str] = (), env: Mapping[str, str] | None = None,
                 cwd: str | None = None, headers: Mapping[str, str] | None = None,
                 bearer_token: str | None = None, api_key: str | None = None,
                 api_key_header: str = "X-API-Key", bearer_token_env: str | None = None,
                 api_key_env: str | None = None, timeout: float = 30.0,
                 connect_timeout: float = 60.0, connect_at_open: bool = True,
                 name: str | None = None):
        if (endpoint is None) == (command is None):
            raise ValueError("MCPServer takes either endpoint= (streamable HTTP, e.g. "
                             "'http://127.0.0.1:8000/mcp') or command= (stdio), not both "
                             "or neither")
        bearer_token = _from_env(bearer_token, bearer_token_env, "bearer_token")
        api_key = _from_env(api_key, api_key_env, "api_key")
        if endpoint is not None:
            parts = urlsplit(endpoint)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"MCPServer endpoint must be an http(s) URL, got "
                                 f"{_without_credentials(endpoint)!r}")
        elif headers or bearer_token or api_key:
            raise ValueError("MCPServer headers, bearer_token and api_key authenticate HTTP "
                             "requests; a stdio server (command=) gets secrets through env=")
        if isinstance(args, str):
            raise TypeError("MCPServer args is a list of arguments, not one str")
        for what, value in (("timeout", timeout), ("connect_timeout", connect_timeout)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"MCPServer {what} is a positive number of seconds, got "
                                 f"{value!r}")
        self.endpoint = endpoint
        self.command = command
        self.args = tuple(str(a) for a in args)
        self.cwd = cwd
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout)
        self.connect_at_open = bool(connect_at_open)
        self._env = dict(env or {})
        self._headers = dict(headers or {})
        if bearer_token is not None:
            self._headers["Authorization"] = f"Bearer {bearer_token}"
        if api_key is not None:
            self._headers[api_key_header] = api_key
        self._secrets = sorted(
            {v for v in self._headers.values() if v} | {bearer_token or "", api_key or ""}
            | {v for k, v in self._env.items() if is_secret_key(k) and v}, key=len,
            reverse=True)
        self._secrets = [s for s in self._secrets if s]
        self._name = name
        self._server_name: str | None = None  # the name the server gave itself
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session: _Session | None = None
        self._listing: _Listing | None = None  # read at open, or at first use
        self._closed = False

    # ------------------------------------------------------------- lifecycle

    def open(self, get_resource: ResourceLookup | None = None) -> None:
        """Connect and read the server's tools and prompts (a server that cannot be
        reached fails here, with a one-line error)."""
        require_extra("mcp", "MCPServer")
        if self.connect_at_open:
            listing = self.refresh()
            log.info("MCP server %s: %d tool(s), %d prompt(s)", self.label,
                     len(listing.tools), len(listing.prompts))

    def close(self) -> None:
        """End the session (a stdio server's process exits) and stop the loop thread."""
        with self._lock:
            self._closed = True
            session, self._session = self._session, None
            loop, self._loop = self._loop, None
            thread, self._thread = self._thread, None
        if loop is None:
            return
        if session is not None:
            try:
                asyncio.run_coroutine_threadsafe(session.stop(), loop).result(CLOSE_WAIT_S)
            except Exception:  # noqa: BLE001 - closing: the process goes with the loop
                log.debug("MCP server %s: session did not end cleanly", self.label)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(CLOSE_WAIT_S)

    def __enter__(self) -> MCPServer:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------- what it offers

    @property
    def label(self) -> str:
        """How errors name the server: ``'orders'`` (its name) or its endpoint/command."""
        if self._name:
            return f"'{self._name}'"
        if self._server_name:
            return f"'{self._server_name}'"
        if self.endpoint is not None:
            return self._masked(_without_credentials(self.endpoint))
        return f"'{os.path.basename(self.command or '')}'"

    def refresh(self) -> _Listing:
        """Read the tool and prompt lists again (the server may have changed them)."""
        self._listing = self._run(self._list, LISTING)
        return self._listing

    def _listed(self, wanted: str) -> _Listing:
        """The lists, read now if the server could not be reached before (or
        ``connect_at_open=False``); an unreachable server is an error naming ``wanted``."""
        listing = self._listing
        if listing is None:
            try:
                listing = self.refresh()
            except MCPServerError as error:
                raise MCPServerError(f"{error} (wanted: {wanted})") from None
        return listing

    def tools(self, names: Sequence[str] | None = None) -> list[MCPTool]:
        """The server's tools (all, or those ``names``, in that order), as read at open or
        at the last :meth:`refresh`."""
        if names is None:
            return [self._tool(t) for t in self._listed("its tools").tools.values()]
        return [self.tool(name) for name in names]

    def tool(self, name: str) -> MCPTool:
        """The tool ``name`` (a ``KeyError`` naming the tools there are)."""
        listing = self._listed(f"tool '{name}'")
        found = listing.tools.get(name)
        if found is None:
            known = ", ".join(listing.tools) or "none"
            raise MCPToolNotFoundError(f"MCP server {self.label} has no tool '{name}'; its "
                                       f"tools: {known} (refresh() reads the list again)")
        return self._tool(found)

    def prompt_names(self) -> list[str]:
        return list(self._listed("its prompts").prompts)

    def prompt(self, name: str, /, **arguments: Any) -> Prompt:
        """The prompt ``name`` as the server renders it: each required argument not given
        here is a ``{placeholder}`` of the returned :class:`Prompt`, to be filled with
        ``format_messages``; optional ones not given take the server's defaults."""
        listing = self._listed(f"prompt '{name}'")
        found = listing.prompts.get(name)
        if found is None:
            known = ", ".join(listing.prompts) or "none"
            raise MCPToolNotFoundError(f"MCP server {self.label} has no prompt '{name}'; "
                                       f"its prompts: {known}")
        wanted = {a.name: "{" + a.name + "}" for a in (found.arguments or []) if a.required}
        given = {**wanted, **{k: str(v) for k, v in arguments.items()}}
        result = self._run(lambda s: s.session.get_prompt(name, given), f"prompt '{name}'")
        messages = []
        for message in result.messages:
            content = message.content
            text = getattr(content, "text", None)
            if text is None:
                raise MCPServerError(f"MCP server {self.label} prompt '{name}' has a "
                                     f"{getattr(content, 'type', '?')} message; only text "
                                     "messages make a Prompt")
            messages.append(ChatMessage(MessageRole(message.role), text))
        return Prompt.from_messages(messages, name=name)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """Call the tool ``name`` (blocking, any thread); its result as text. Inside an
        action, use it through ``ctx.chat`` or ``ctx.durable_execute_async`` so the call is
        durable."""
        what = f"tool '{name}'"
        result = self._run(lambda s: s.session.call_tool(name, dict(arguments or {})), what)
        text = _text_of(result)
        if getattr(result, "is_error", False):
            raise MCPToolError(f"MCP server {self.label} {what} answered an error: "
                               f"{self._masked(_one_line(text))}")
        return text

    # ------------------------------------------------------------- the bridge

    def _tool(self, listed: Any) -> MCPTool:
        schema = dict(listed.input_schema or {"type": "object", "properties": {}})
        schema.pop("title", None)
        return MCPTool(listed.name, (listed.description or "").strip(), schema,
                       _CallTool(self, listed.name), origin=f"MCP server {self.label}")

    async def _list(self, session: _Session) -> _Listing:
        tools: dict[str, Any] = {}
        prompts: dict[str, Any] = {}
        capabilities = session.capabilities
        if capabilities is None or capabilities.tools is not None:
            for tool in await _all_pages(session.session.list_tools, "tools"):
                tools[tool.name] = tool
        if capabilities is None or capabilities.prompts is not None:
            for prompt in await _all_pages(session.session.list_prompts, "prompts"):
                prompts[prompt.name] = prompt
        return _Listing(tools, prompts)

    def _run(self, request: Callable[[_Session], Awaitable[T]], what: str) -> T:
        """``request(session)`` on the loop thread, waited for ``timeout`` seconds."""
        session = self._connected(what)
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(_awaited(request, session), self._loop)
        try:
            return future.result(self.timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise MCPServerError(f"MCP server {self.label} {what} did not answer within "
                                 f"{self.timeout:g} s (MCPServer timeout=)") from None
        except concurrent.futures.CancelledError:
            raise MCPServerError(f"MCP server {self.label} {what} was cancelled: the "
                                 "resource closed") from None
        except Exception as error:  # noqa: BLE001 - one line naming server and request
            if _breaks_session(error):
                self._drop(session)
                raise MCPServerError(
                    f"MCP server {self.label} {what} failed: the connection broke "
                    f"({self._describe(error)}); the next call connects again") from None
            raise MCPToolError(f"MCP server {self.label} {what} failed: "
                               f"{self._describe(error)}") from None

    def _connected(self, what: str) -> _Session:
        with self._lock:
            if self._closed:
                raise MCPServerError(f"MCP server {self.label} is closed ({what})")
            if self._session is not None and self._session.alive:
                return self._session
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                                name=f"mcp-{self.label.strip(chr(39))}")
                self._thread.start()
            session = _Session(self, self._headers, self._env, self._describe)
            future = asyncio.run_coroutine_threadsafe(session.start(), self._loop)
            try:
                future.result(self.connect_timeout)
            except concurrent.futures.TimeoutError:
                future.cancel()
                raise MCPServerError(f"MCP server {self.label} did not answer within "
                                     f"{self.connect_timeout:g} s when connecting "
                                     f"({self._where()}; MCPServer connect_timeout=)"
                                     f"{_wanted(what)}") from None
            except Exception as error:  # noqa: BLE001 - one line naming the server
                where = "" if self.label == self._where() else f" ({self._where()})"
                raise MCPServerError(f"MCP server {self.label} cannot be reached{where}: "
                                     f"{self._describe(error)}{_wanted(what)}") from None
            self._session = session
            self._server_name = self._server_name or session.server_name
            return session

    def _drop(self, session: _Session) -> None:
        with self._lock:
            if self._session is session:
                self._session = None
        session.alive = False
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(session.stop(), self._loop)

    def _where(self) -> str:
        if self.endpoint is not None:
            return self._masked(_without_credentials(self.endpoint))
        return f"command {os.path.basename(self.command or '')}"

    def _describe(self, error: BaseException) -> str:
        leaf = _leaf(error)
        text = str(leaf) or repr(leaf)
        return self._masked(f"{type(leaf).__name__}: {_one_line(text)}")

    def _masked(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    def __repr__(self) -> str:
        where = (f"endpoint={self._masked(_without_credentials(self.endpoint))!r}"
                 if self.endpoint is not None else f"command={self.command!r}")
        return f"MCPServer({where})"

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("an MCPServer holds a live session and does not pickle; declare it "
                        "as a resource (@mcp_server) and get it with ctx.get_resource")


class MCPToolNotFoundError(MCPServerError, KeyError):
    """The server lists no tool (or prompt) of that name."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class _Session:
    """One session with the server, held open by a task on the server's loop thread
    (the SDK's context managers must end in the task that began them)."""

    def __init__(self, server: MCPServer, headers: Mapping[str, str] | None,
                 env: Mapping[str, str] | None, describe: Callable[[BaseException], str]):
        # the server's secrets and its error describer, handed over (not read off it)
        self._server = server
        self._headers = headers
        self._env = env
        self._describe = describe
        self.session: Any = None
        self.capabilities: Any = None
        self.server_name: str | None = None
        self.alive = False
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._hold(ready))
        await ready

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        from mcp import ClientSession

        assert self._stop is not None
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(stack))
                self.session = await stack.enter_async_context(ClientSession(read, write))
                result = await self.session.initialize()
                self.capabilities = getattr(result, "capabilities", None)
                info = getattr(result, "server_info", None)
                self.server_name = getattr(info, "name", None) or None
                self.alive = True
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as error:  # noqa: BLE001 - handed to whoever waits
            self.alive = False
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception)
                                    else RuntimeError(repr(error)))
            elif not isinstance(error, asyncio.CancelledError):
                log.debug("MCP server %s: session ended: %s", self._server.label,
                          self._describe(error))
        finally:
            self.alive = False

    def _transport(self, stack: AsyncExitStack) -> Any:
        server = self._server
        if server.endpoint is not None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = create_mcp_http_client(headers=dict(self._headers or {}) or None,
                                            timeout=httpx2.Timeout(server.timeout))
            stack.push_async_exit(client)
            return streamable_http_client(server.endpoint, http_client=client)
        from mcp import StdioServerParameters, stdio_client

        parameters = StdioServerParameters(command=server.command or "", args=list(server.args),
                                           env=dict(self._env or {}) or None, cwd=server.cwd)
        return stdio_client(parameters)

    async def stop(self) -> None:
        self.alive = False
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), CLOSE_WAIT_S)
            except BaseException:  # noqa: BLE001 - closing
                self._task.cancel()


@dataclass(frozen=True)
class MCPTool(Tool):
    """A tool of an MCP server: its JSON schema validates the model's arguments (a
    mistake goes back to the model), and a call goes to the server."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_validator", None)

    @property
    def wants_context(self) -> bool:
        return False  # runs on a worker thread: a network call

    @property
    def server(self) -> MCPServer:
        return self.function.server  # type: ignore[attr-defined]

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        if args:
            raise TypeError(f"MCP tool '{self.name}' takes its arguments by name")
        return self.invoke(kwargs)

    def argument_error(self, arguments: Mapping[str, Any]) -> str | None:
        if not isinstance(arguments, Mapping):
            return f"arguments of tool '{self.name}' must be a JSON object"
        import jsonschema

        validator = self.__dict__.get("_validator")
        if validator is None:
            cls = jsonschema.validators.validator_for(self.parameters)
            validator = cls(dict(self.parameters))
            object.__setattr__(self, "_validator", validator)
        problems = [f"argument '{'.'.join(map(str, e.absolute_path)) or '(all)'}': "
                    f"{e.message:.200}" for e in validator.iter_errors(dict(arguments))]
        if problems:
            return f"bad arguments for tool '{self.name}': {'; '.join(problems)}"
        return None

    def invoke(self, arguments: Mapping[str, Any], context: Any = None) -> str:
        problem = self.argument_error(arguments)
        if problem is not None:
            raise ValueError(problem)
        return str(self.function(arguments))

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_model", "_validator")}


class _CallTool:
    """The function of an :class:`MCPTool`: one call to the server."""

    def __init__(self, server: MCPServer, name: str):
        self.server = server
        self.name = name
        self.__qualname__ = f"MCPServer.call_tool.{name}"

    def __call__(self, arguments: Mapping[str, Any]) -> str:
        return self.server.call_tool(self.name, arguments)


async def _awaited(request: Callable[[_Session], Awaitable[T]], session: _Session) -> T:
    return await request(session)


async def _all_pages(list_page: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    from mcp.types import PaginatedRequestParams

    found: list[Any] = []
    cursor = None
    for _ in range(100):
        page = await list_page(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        found.extend(getattr(page, field))
        cursor = getattr(page, "next_cursor", None)
        if not cursor:
            break
    return found


def _text_of(result: Any) -> str:
    parts = []
    for block in getattr(result, "content", None) or []:
        text = getattr(block, "text", None)
        if text is not None:
            parts.append(text)
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} "
                         f"{getattr(block, 'mime_type', '') or ''}]".replace(" ]", "]"))
    if not parts and getattr(result, "structured_content", None) is not None:
        return json.dumps(result.structured_content, default=str)
    return "\n".join(parts)


def _leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _breaks_session(error: BaseException) -> bool:
    """Whether the session is gone (any error but an answer of a live server)."""
    from mcp import MCPError
    from mcp_types.jsonrpc import CONNECTION_CLOSED

    leaf = _leaf(error)
    return not isinstance(leaf, MCPError) or getattr(leaf, "code", None) == CONNECTION_CLOSED


def _wanted(what: str) -> str:
    return "" if what == LISTING else f" (wanted: {what})"


def _from_env(value: str | None, variable: str | None, what: str) -> str | None:
    if variable is None:
        return value
    if value is not None:
        raise ValueError(f"MCPServer takes {what}= or {what}_env=, not both")
    found = os.environ.get(variable)
    if not found:
        raise ValueError(f"MCPServer {what}_env={variable!r}: the environment variable is not "
                         "set where the resource is built (on each TaskManager)")
    return found


def _one_line(text: str) -> str:
    return " ".join(text.split())[:500]


def _without_credentials(url: str) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
