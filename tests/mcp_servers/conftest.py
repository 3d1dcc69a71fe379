"""Real MCP servers for the MCP tests: the example order server
(``flink_agents_ltm.examples.orders_mcp_server``) as a child process, over stdio (the client
starts it) and over streamable HTTP on 127.0.0.1 (started here, with a bearer token read
from its environment). Each counts its ``lookup_order`` calls in a file the tests read."""

import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER_MODULE = "flink_agents_ltm.examples.orders_mcp_server"
TOKEN = "orders-token-" + "7f3a9c"  # a secret the tests look for in every text they see


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class HttpServer:
    port: int
    count_file: Path
    process: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> "HttpServer":
        env = {**os.environ, "ORDERS_TOKEN": TOKEN}
        self.process = subprocess.Popen(
            [sys.executable, "-m", SERVER_MODULE, "--http", str(self.port), "--count-file",
             str(self.count_file), "--token-env", "ORDERS_TOKEN"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the MCP server exited with {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the MCP server did not listen within 60 s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    server = HttpServer(free_port(), tmp_path_factory.mktemp("mcp") / "calls").start()
    yield server
    server.kill()


@pytest.fixture
def own_http_server(tmp_path):
    """A server of the test's own (it may kill it)."""
    server = HttpServer(free_port(), tmp_path / "calls").start()
    yield server
    server.kill()


@pytest.fixture
def count_file(tmp_path):
    return tmp_path / "calls"


def stdio_arguments(count_file) -> dict:
    """MCPServer arguments of a stdio order server counting in ``count_file``."""
    return {"command": sys.executable,
            "args": ["-m", SERVER_MODULE, "--count-file", str(count_file)]}


def order_id() -> str:
    """An order id of this test alone (the count file of a module's server is shared)."""
    return f"T-{uuid.uuid4().hex[:8]}"
