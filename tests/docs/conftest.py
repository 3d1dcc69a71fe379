"""The documentation site built once per session with MkDocs (strict), and served from
127.0.0.1 for a headless browser. Without MkDocs or Chromium the tests skip, except in CI
(`CI` set), where a missing tool is a failure."""

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.job_runner import ROOT

# A MkDocs outside this venv (e.g. a private one: FLINK_AGENTS_LTM_MKDOCS=/tmp/v/bin/mkdocs);
# by default the venv's, which `[dev]` installs.
MKDOCS_ENV = "FLINK_AGENTS_LTM_MKDOCS"


def missing(tool: str, how: str) -> None:
    """Fail in CI, skip elsewhere: a developer's machine may lack the tool."""
    message = f"{tool} is not installed ({how})"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI must have it")
    pytest.skip(message)


def mkdocs_command() -> list[str]:
    if os.environ.get(MKDOCS_ENV):
        return [os.environ[MKDOCS_ENV]]
    if importlib.util.find_spec("mkdocs") is None:
        missing("MkDocs", f"pip install -e '.[dev]', or point ${MKDOCS_ENV} at a mkdocs")
    return [sys.executable, "-m", "mkdocs"]


@pytest.fixture(scope="session")
def mkdocs_build(tmp_path_factory) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of mkdocs.yml into a temp folder (what `make docs` runs)."""
    site = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # Material's banner about MkDocs 2
    result = subprocess.run(
        [*mkdocs_command(), "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(site)], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300)
    result.site = site  # type: ignore[attr-defined]
    yield result
    shutil.rmtree(site, ignore_errors=True)


@pytest.fixture(scope="session")
def site(mkdocs_build) -> Path:
    if mkdocs_build.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{mkdocs_build.stderr}")
    return mkdocs_build.site


@pytest.fixture(scope="session")
def served_site(site):
    """The built site on http://127.0.0.1:<free port>/."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # the base class names it format
        pass


@pytest.fixture(scope="session")
def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        missing("Chromium", "Debian: apt-get install -y --no-install-recommends chromium")
    return path
