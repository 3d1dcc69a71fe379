"""``flink-agents-ltm``: operations on a job's long-term memory from a shell.

    flink-agents-ltm erase-key --job-id JOB --key KEY [--key KEY2 ...]
                               [--config FILE | --config-env VAR] [--vector-store-file FILE]
                               [--embedding-dims N] [--json] [--compact]
    flink-agents-ltm doctor [--config FILE | --config-env VAR] [--vector-store-file FILE]
                            [--embedding-dims N] [--check NAME ...]
    flink-agents-ltm sweep --job-id JOB [--batch N] [--max-batches M]
                           [--config FILE | --config-env VAR] [--vector-store-file FILE]
                           [--embedding-dims N] [--json]
    flink-agents-ltm java-classpath [--lines]
    flink-agents-ltm --version

``java-classpath`` prints what a Java job needs on its class path in this install: the Java
bridge's jar carried by the wheel, PyFlink's ``lib/*.jar`` and its ``opt/flink-python-*.jar``
(Flink's Python support, with Pemja).

    flink-agents-ltm audit --job-id JOB [--key KEY | --erase-key KEY] [--file FILE]
                           [--config FILE | --config-env VAR]

``audit`` prints a job's memory audit records (``long-term-memory.audit-log.enabled``), one
JSON object per line: operations, ids and times, never a value. ``--erase-key`` removes a
key's records from the log (its ids included) for the cases where even those must go.

    flink-agents-ltm trace --job-id JOB --key KEY [--file FILE]
                           [--config FILE | --config-env VAR]

``trace`` prints a key's runs as a tree from the event log (``agents.event-log.sink``):
each input, its actions with their durable calls, memory operations and sent events, its
outputs and how the run ended (see :mod:`flink_agents_ltm.trace`).

``sweep`` deletes a job's expired memory items (added with a ``ttl`` or under
``long-term-memory.ttl``), text included, ``--batch`` items at a time, printing a line per
batch: expiry hides an item at once, the sweep makes it erasure (see docs/memory-expiry.md).
It builds the memory as ``erase-key`` does (same configuration, no model loaded).

``doctor`` checks this machine and install (see :mod:`flink_agents_ltm.doctor`).

``erase-key`` erases everything a job remembers of a key, every memory set of it, text
included (a right-to-be-forgotten request). It builds the job's long-term memory the way
its operators do (``agents.long-term-memory.factory``, default Mem0) from the same
configuration: a YAML or JSON file of option keys, or the same text in an environment
variable, never from the command line, where every user of the machine can read it
(``ps``). Messages mask passwords.

The key is the key's text (``str(key)`` of the stream's key: the keys ``7`` and ``"7"``
share one memory). Erasing needs no model: chat model options are ignored, and a job
whose embedding model is a declared resource passes its vector size with
``--embedding-dims`` (the store is checked against it; nothing is embedded and no model
is loaded). ``--compact`` then removes the erased rows' bytes from the store's files:
``VACUUM FULL`` of the table on pgvector (an exclusive lock on the table while it runs; a
plain ``VACUUM`` leaves the bytes in the heap and index files), ``VACUUM`` of the file on
the embedded store.

This module sits above the layers: it uses the runtime's factories, which find the
integrations by name. What the commands read of a job's configuration is
:mod:`flink_agents_ltm.cli_config`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from flink_agents_ltm import __version__
from flink_agents_ltm import doctor as checks
from flink_agents_ltm import trace as tracing
from flink_agents_ltm.api.event_log import configured_file
from flink_agents_ltm.api.job_errors import missing_java_line
from flink_agents_ltm.api.memory.mailbox import MailboxThreadCheck
from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions, LongTermMemoryOptions
from flink_agents_ltm.api.redaction import redact_text
from flink_agents_ltm.cli_config import (
    CONFIG_VARIABLE,
    DEFAULT_EMBEDDING_DIMS,
    PROGRAM,
    UsageError,
    describe_store,
    memory_options,
    read_config,
    read_options,
    require_store,
    resolved_store,
)

log = logging.getLogger(__name__)


def erase_key(args: argparse.Namespace) -> int:
    from flink_agents_ltm.runtime.memory.factories import DEFAULT, build_long_term_memory

    values, source = read_options(args)
    config, resources = memory_options(values, args.embedding_dims)
    factory = args.factory or config.get(AgentsOptions.LONG_TERM_MEMORY_FACTORY) or DEFAULT
    where = describe_store(config, args.job_id)
    compact = compaction(config, args.job_id, factory) if args.compact else None
    if factory == DEFAULT:
        require_store(config, args.job_id)
    log.info("erasing %d key(s) of job '%s' from %s (factory %s, configuration from %s)",
             len(args.key), args.job_id, where, factory, source)
    memory = build_long_term_memory(factory, args.job_id, config, MailboxThreadCheck(),
                                    resources)
    try:
        for key in args.key:  # one line per key as it is done: a later failure keeps them
            count = memory.erase_key(key)
            if args.json:
                print(json.dumps({"job_id": args.job_id, "key": key, "erased": count,
                                  "store": where}), flush=True)
            else:
                print(f"erased {count} item{'' if count == 1 else 's'} of key {key!r} of job "
                      f"{args.job_id!r} from {where}", flush=True)
    finally:
        memory.close()
    if compact is not None:
        log.info("compacting %s", where)
        compact()
        print(f"compacted {where}" if not args.json else json.dumps(
            {"job_id": args.job_id, "compacted": True, "store": where}), flush=True)
    return 0


def sweep(args: argparse.Namespace) -> int:
    from flink_agents_ltm.runtime.memory.factories import DEFAULT, build_long_term_memory

    if args.batch <= 0 or (args.max_batches is not None and args.max_batches <= 0):
        raise UsageError("--batch and --max-batches must be positive numbers")
    values, source = read_options(args)
    config, resources = memory_options(values, args.embedding_dims)
    factory = args.factory or config.get(AgentsOptions.LONG_TERM_MEMORY_FACTORY) or DEFAULT
    where = describe_store(config, args.job_id)
    if factory == DEFAULT:
        require_store(config, args.job_id)
    log.info("sweeping expired items of job '%s' from %s (factory %s, configuration from %s)",
             args.job_id, where, factory, source)
    memory = build_long_term_memory(factory, args.job_id, config, MailboxThreadCheck(),
                                    resources)
    total = batches = 0
    try:
        while args.max_batches is None or batches < args.max_batches:
            swept = memory.sweep_expired(limit=args.batch)
            batches += 1
            total += swept
            if swept:  # one line per batch as it is done: a later failure keeps them
                print(json.dumps({"job_id": args.job_id, "batch": batches, "swept": swept,
                                  "total": total}) if args.json else
                      f"batch {batches}: deleted {swept} expired item"
                      f"{'' if swept == 1 else 's'} ({total} so far)", flush=True)
            if swept < args.batch:
                break
    finally:
        memory.close()
    done = args.max_batches is None or batches < args.max_batches
    print(json.dumps({"job_id": args.job_id, "swept": total, "complete": done,
                      "store": where}) if args.json else
          f"swept {total} expired item{'' if total == 1 else 's'} of job {args.job_id!r} "
          f"from {where}{'' if done else ' (stopped at --max-batches; more may be expired)'}",
          flush=True)
    return 0


def audit(args: argparse.Namespace) -> int:
    values, _ = read_config(args.config, args.config_env)
    if args.file:
        values[LongTermMemoryOptions.AUDIT_LOG_FILE.key] = args.file
    values[LongTermMemoryOptions.AUDIT_LOG.key] = True  # the file the job would write
    audit_log = LongTermMemoryOptions.audit_log(values)
    assert audit_log is not None
    if args.erase_key is not None:
        removed = audit_log.erase_key(args.job_id, args.erase_key)
        print(f"removed {removed} audit record{'' if removed == 1 else 's'} of key "
              f"{args.erase_key!r} of job {args.job_id!r} from {audit_log.path}", flush=True)
        return 0
    if not audit_log.path.exists():
        raise UsageError(f"no audit log at {audit_log.path}: is "
                         f"'{LongTermMemoryOptions.AUDIT_LOG.key}' on for the job, and is "
                         "this the machine it runs on? (--file names another file)")
    for record in audit_log.records(args.job_id, args.key):
        print(json.dumps(record, ensure_ascii=False), flush=True)
    return 0


def trace(args: argparse.Namespace) -> int:
    if args.file:
        path = Path(args.file).expanduser()
    else:
        values, _ = read_config(args.config, args.config_env)
        path = configured_file(values, AgentsOptions.EVENT_LOG_FILE.key,
                               LongTermMemoryOptions.BASE_DIR.key)
    if not path.is_file():
        raise UsageError(f"no event log at {path}: is '{AgentsOptions.EVENT_LOG_SINK.key}' "
                         "'file' for the job, and is this the machine it runs on? (--file "
                         "names another file)")
    records = tracing.read_records(path, args.job_id, args.key)
    if not records:
        print(f"{PROGRAM} trace: no record of key {args.key!r} of job {args.job_id!r} in "
              f"{path}", file=sys.stderr)
        return 1
    for line in tracing.render(records):
        print(line)
    return 0


def compaction(config: AgentsConfiguration, job_id: str, factory: str
               ) -> Callable[[], None]:
    """What ``--compact`` runs after erasing, checked before anything is erased: what the
    store's backend compacts with (``VACUUM FULL`` of the collection's table on pgvector,
    ``VACUUM`` of the job's file on the embedded store); other stores are refused."""
    from flink_agents_ltm.runtime.memory.factories import DEFAULT

    if factory != DEFAULT:
        raise UsageError(f"--compact works with the {DEFAULT} factory's stores, not with the "
                         f"factory {factory!r}")
    store = resolved_store(config, job_id)
    compact = None
    if store is not None:
        from flink_agents_ltm.integrations.mem0.providers import backend_for

        settings = dict(store.get("config") or {})
        compact = backend_for(str(store.get("provider"))).compactor(settings)
    if compact is None:
        named = config.get(LongTermMemoryOptions.VECTOR_STORE)
        provider = named.get("provider") if isinstance(named, dict) else named
        raise UsageError(f"--compact works on the embedded store and on pgvector, not on the "
                         f"{provider!r} store")
    return compact


class _Parser(argparse.ArgumentParser):
    """Options are never abbreviated (``--vector-store`` must not pass for
    ``--vector-store-file`` and name a file after a JSON text), and usage errors mask
    secrets (they echo the arguments they refuse)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})

    def error(self, message: str) -> NoReturn:
        super().error(redact_text(message))


def _store_arguments(command: argparse.ArgumentParser) -> None:
    """Where a command finds the job's memory: its configuration, store and model size."""
    source = command.add_mutually_exclusive_group()
    source.add_argument("--config", metavar="FILE",
                        help="YAML or JSON file of the job's long-term memory options")
    source.add_argument("--config-env", metavar="VAR",
                        help=f"environment variable holding that text (default: "
                             f"{CONFIG_VARIABLE}, if set)")
    command.add_argument("--vector-store-file", metavar="FILE",
                         help=f"JSON file holding the '{LongTermMemoryOptions.VECTOR_STORE.key}' "
                              "value alone, as `scripts/pgvector-server status --output FILE` "
                              "writes it (overrides the configuration's)")
    command.add_argument("--factory", help="long-term memory factory (default: the "
                         f"configuration's '{AgentsOptions.LONG_TERM_MEMORY_FACTORY.key}', "
                         "else mem0)")
    command.add_argument("--embedding-dims", type=int, metavar="N",
                         help="vector size of the job's own embedding model (when the "
                              "configuration names one); nothing is embedded")


def parser() -> argparse.ArgumentParser:
    top = _Parser(
        prog=PROGRAM, description="Operations on the long-term memory of flink-agents-ltm jobs.",
        epilog=f"Configuration: a YAML or JSON mapping of option keys, e.g.\n"
               f"  {LongTermMemoryOptions.VECTOR_STORE.key}:\n"
               "    provider: pgvector\n"
               "    config: {host: 127.0.0.1, port: 5433, dbname: mem0, user: mem0, "
               "password: ...}\n"
               f"read from --config FILE (keep it 0600), else from ${CONFIG_VARIABLE}. "
               "Secrets are never taken from the command line.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    erase = commands.add_parser(
        "erase-key", help="erase every memory set of one key of a job (right to be forgotten)",
        description="Erase everything a job's long-term memory holds for a key: every memory "
                    "set, text included. Prints how many items it erased per key. Exit 0 on "
                    "success, 1 when the memory cannot be built or erased, 2 on bad arguments "
                    "or configuration.")
    erase.add_argument("--job-id", required=True,
                       help=f"the job's '{AgentsOptions.JOB_ID.key}' (its identity in memory)")
    erase.add_argument("--key", required=True, action="append",
                       help="the key's text, str(key); repeat for several keys")
    _store_arguments(erase)
    erase.add_argument("--json", action="store_true",
                       help="print one JSON object per key erased instead of a sentence")
    erase.add_argument("--compact", action="store_true",
                       help="after erasing, remove the erased rows' bytes from the store's "
                            "files: on pgvector VACUUM FULL of the collection's table, which "
                            "takes an exclusive lock on the table for its whole duration "
                            "(every job's reads and writes on it wait); on the embedded store "
                            "VACUUM of the job's file")
    erase.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    erase.set_defaults(run=erase_key)
    sweeper = commands.add_parser(
        "sweep", help="delete a job's expired memory items for real (ttl), in batches",
        description="Delete the expired items of a job's long-term memory (items added or "
                    "updated with a ttl, or under long-term-memory.ttl), text included, "
                    "--batch items at a time, until none is left (or --max-batches). Expired "
                    "items are already invisible to the job; the sweep erases them. Prints a "
                    "line per batch and a total. Exit 0 on success, 1 when the memory cannot be "
                    "built or swept, 2 on bad arguments or configuration.")
    sweeper.add_argument("--job-id", required=True,
                         help=f"the job's '{AgentsOptions.JOB_ID.key}' (its identity in memory)")
    sweeper.add_argument("--batch", type=int, default=1000, metavar="N",
                         help="items deleted per batch (default 1000)")
    sweeper.add_argument("--max-batches", type=int, metavar="M",
                         help="stop after M batches (default: until no expired item is left)")
    _store_arguments(sweeper)
    sweeper.add_argument("--json", action="store_true",
                         help="print one JSON object per batch and one for the total")
    sweeper.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sweeper.set_defaults(run=sweep)
    trail = commands.add_parser(
        "audit", help="print a job's memory audit records (ids and times, never text), or "
                      "remove a key's records",
        description="Print the records of a job's memory audit log (the option "
                    f"'{LongTermMemoryOptions.AUDIT_LOG.key}'), oldest first, one JSON object "
                    "per line: time, operation, job, key, set, item ids, observation id, and "
                    "for an erasure its count; never a value, query or metadata. With "
                    "--erase-key, remove every record of that key instead (one record of the "
                    "removal stays, naming the key by its SHA-256). Exit 0 on success, 1 when "
                    "the log cannot be read or written, 2 on bad arguments or configuration.")
    trail.add_argument("--job-id", required=True,
                       help=f"the job's '{AgentsOptions.JOB_ID.key}'")
    which = trail.add_mutually_exclusive_group()
    which.add_argument("--key", help="print only this key's records (the key's text)")
    which.add_argument("--erase-key", metavar="KEY",
                       help="remove every record of this key from the log")
    trail.add_argument("--file", metavar="FILE",
                       help="the audit log (default: the configuration's "
                            f"'{LongTermMemoryOptions.AUDIT_LOG_FILE.key}', else "
                            "audit/memory-audit.jsonl under the home folder)")
    source = trail.add_mutually_exclusive_group()
    source.add_argument("--config", metavar="FILE",
                        help="YAML or JSON file of the job's long-term memory options")
    source.add_argument("--config-env", metavar="VAR",
                        help=f"environment variable holding that text (default: "
                             f"{CONFIG_VARIABLE}, if set)")
    trail.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    trail.set_defaults(run=audit)
    tree = commands.add_parser(
        "trace", help="print a key's runs as a tree from the event log",
        description="Print the runs of one key of a job as a tree, read from the event log "
                    f"('{AgentsOptions.EVENT_LOG_SINK.key}' file, or a Flink log the "
                    "'logging' sink wrote to): each input, its actions (outcome, duration, "
                    "error class) with their durable calls (write position, outcome), memory "
                    "operations (set and item ids) and sent events, its outputs, and how "
                    "the run ended. Exit 0 on success, 1 when the log holds no record of the "
                    "key, 2 on bad arguments or a missing log.")
    tree.add_argument("--job-id", required=True,
                         help=f"the job's '{AgentsOptions.JOB_ID.key}'")
    tree.add_argument("--key", required=True, help="the key's text, str(key)")
    tree.add_argument("--file", metavar="FILE",
                         help="the event log (default: the configuration's "
                              f"'{AgentsOptions.EVENT_LOG_FILE.key}', else "
                              "event-log/events.jsonl under the home folder)")
    source = tree.add_mutually_exclusive_group()
    source.add_argument("--config", metavar="FILE",
                        help="YAML or JSON file of the job's options (where its log is)")
    source.add_argument("--config-env", metavar="VAR",
                        help=f"environment variable holding that text (default: "
                             f"{CONFIG_VARIABLE}, if set)")
    tree.set_defaults(run=trace)
    doctor = commands.add_parser(
        "doctor", help="check this machine and install: Python, Java and Pemja, PyFlink, "
                       "extras, torch, the embedding model, the CPU, the configured store "
                       "(pgvector's self-check), the home folder",
        description="Check what flink-agents-ltm needs, one line per check (OK, FAIL or "
                    "SKIP and a short detail), the fast checks first; the embedding model "
                    "takes several seconds. A configured store is checked by its own "
                    "self-check (pgvector: its extension's code run on a scratch table). "
                    "Nothing secret is printed. Exit 0 when no check failed "
                    "(skips allowed), 1 otherwise (the last line names the failed checks), "
                    "2 on bad arguments or configuration.")
    source = doctor.add_mutually_exclusive_group()
    source.add_argument("--config", metavar="FILE",
                        help="YAML or JSON file of a job's long-term memory options (its "
                             "store and embedding model are checked)")
    source.add_argument("--config-env", metavar="VAR",
                        help=f"environment variable holding that text (default: "
                             f"{CONFIG_VARIABLE}, if set)")
    doctor.add_argument("--vector-store-file", metavar="FILE",
                        help="JSON file holding the vector store alone, as "
                             "`scripts/pgvector-server status --output FILE` writes it")
    doctor.add_argument("--embedding-dims", type=int, metavar="N",
                        help="vector size the store's self-check uses (default "
                             f"{DEFAULT_EMBEDDING_DIMS}, the default model's)")
    checks.add_arguments(doctor)
    doctor.set_defaults(run=run_doctor)
    classpath = commands.add_parser(
        "java-classpath", help="print the class path a Java job needs in this install (the "
                               "bridge's jar and PyFlink's jars)",
        description="Print the jars a Java job using the Java bridge needs, separated by "
                    f"'{os.pathsep}' for java -cp: the bridge's jar carried by this install, "
                    "PyFlink's lib/*.jar and opt/flink-python-*.jar (Flink's Python support "
                    "with Pemja). Exit 0, or 2 naming what is missing (a wheel built without "
                    "the jar: run 'make jar' in a checkout).",
        epilog="Example: java -cp \"$(flink-agents-ltm java-classpath)\" "
               "org.flinkagents.ltm.job.MemoryAgentJob --python \"$(command -v python)\" ...")
    classpath.add_argument("--lines", action="store_true", help="one jar per line instead")
    classpath.set_defaults(run=java_classpath)
    return top


BRIDGE_JAR = Path(__file__).with_name("java") / "flink-agents-ltm-bridge.jar"


def java_classpath_entries(bridge_jar: Path = BRIDGE_JAR) -> list[Path]:
    """The jars a Java job of this install needs: the bridge's, PyFlink's ``lib/*.jar`` and
    its ``opt/flink-python-*.jar``. A missing part is a :class:`UsageError` saying how to
    get it."""
    if not bridge_jar.is_file():
        raise UsageError(f"no Java bridge jar at {bridge_jar}: this install was built without "
                         "it; in a checkout run 'make jar' (or 'make dist' for a wheel with it)")
    spec = importlib.util.find_spec("pyflink")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("PyFlink is not installed in this Python (pip install apache-flink)")
    pyflink = Path(next(iter(spec.submodule_search_locations)))
    lib = sorted((pyflink / "lib").glob("*.jar"))
    flink_python = sorted((pyflink / "opt").glob("flink-python-*.jar"))
    if not lib or not flink_python:
        raise UsageError(f"PyFlink at {pyflink} has no lib/*.jar or opt/flink-python-*.jar")
    return [bridge_jar, *lib, *flink_python]


def java_classpath(args: argparse.Namespace) -> int:
    entries = java_classpath_entries()
    print(("\n" if args.lines else os.pathsep).join(str(entry) for entry in entries))
    return 0


def run_doctor(args: argparse.Namespace) -> int:
    values, source = read_options(args)
    return checks.run(checks.setup_from(values, source, args.embedding_dims), args.check,
                      program=PROGRAM)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
                        format=f"{PROGRAM} %(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    if getattr(args, "embedding_dims", None) is not None and args.embedding_dims <= 0:
        return _fail(args, "--embedding-dims must be a positive number", 2)
    try:
        return args.run(args)
    except UsageError as error:
        return _fail(args, str(error), 2)
    except Exception as error:  # noqa: BLE001 - any failure is a message and exit code 1
        return _fail(args, missing_java_line(error) or f"{type(error).__name__}: {error}", 1)


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    print(f"{PROGRAM} {args.command}: error: {redact_text(message)}", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
