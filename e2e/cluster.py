"""The session's standalone cluster as the e2e tests use it: submitting through
``scripts/flink-cluster run`` after checking that the cluster has the slots the job needs,
and cancelling (Flink REST API) every job a test submitted once the test ends, pass or fail,
so that one failed test leaves nothing behind for the next."""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from e2e.client_output import summary
from tests.pgvector.server import ROOT

# A job in one of these states holds no slot and does nothing more.
TERMINAL = {"FINISHED", "CANCELED", "FAILED", "SUSPENDED"}
DEFAULT_SLOTS = 2  # the test jobs' --parallelism default


class LeftoverJobError(AssertionError):
    """The cluster lacks free slots for a job, or a job would not stop: names the jobs."""


def slots_needed(args: Sequence[str]) -> int:
    """The slots a ``flink run`` command line needs: its job's ``--parallelism`` (or
    ``-p``; slot sharing puts one subtask of every operator into each slot)."""
    for flag in ("--parallelism", "-p"):
        if flag in args:
            return int(args[list(args).index(flag) + 1])
    return DEFAULT_SLOTS


@dataclass
class Cluster:
    folder: Path
    rest_port: int
    vector_store: dict | None = field(repr=False)  # holds the password
    start_seconds: float
    transcripts: Path  # where summaries put a client's whole output
    _clients: list[subprocess.Popen] = field(default_factory=list, repr=False)
    _transcript_numbers: Iterator[int] = field(default_factory=itertools.count, repr=False)

    # ------------------------------------------------------------------ REST

    def rest(self, path: str, method: str = "GET") -> dict:
        request = urllib.request.Request(f"http://127.0.0.1:{self.rest_port}{path}",
                                         method=method)
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else {}

    def jobs(self) -> list[dict]:
        """Every job the JobManager knows: ``{"jid", "name", "state"}``."""
        return [{"jid": job["jid"], "name": job["name"], "state": job["state"]}
                for job in self.rest("/jobs/overview")["jobs"]]

    def unfinished_jobs(self) -> list[dict]:
        return [job for job in self.jobs() if job["state"] not in TERMINAL]

    def slots(self) -> tuple[int, int]:
        """``(available, total)`` task slots of the registered TaskManagers."""
        overview = self.rest("/overview")
        return overview["slots-available"], overview["slots-total"]

    # ------------------------------------------------------------------ before submitting

    def require_free_slots(self, needed: int, wait: float = 30) -> None:
        """Return once ``needed`` slots are free (a job that just ended gives its slots back
        a moment later, a restarted TaskManager registers them); otherwise fail at once
        naming the jobs that hold them, instead of a resource timeout minutes later."""
        deadline = time.monotonic() + wait
        while True:
            available, total = self.slots()
            if available >= needed:
                return
            holders = self.unfinished_jobs()
            if holders or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        held_by = ("; ".join(f"{job['jid']} '{job['name']}' {job['state']}" for job in holders)
                   or "no unfinished job (are TaskManagers missing?)")
        raise LeftoverJobError(
            f"the cluster has {available} of {total} slots free and this job needs {needed};"
            f" held by: {held_by}")

    # ------------------------------------------------------------------ submitting

    def command(self, *flink_run_args: str) -> list[str]:
        return [str(ROOT / "scripts" / "flink-cluster"), "run", "--dir", str(self.folder),
                *flink_run_args]

    def run(self, *flink_run_args: str, timeout: float = 240, slots: int | None = None
            ) -> subprocess.CompletedProcess:
        """``flink run`` against this cluster, once it has the job's slots free; returns
        the finished client process."""
        self.require_free_slots(slots_needed(flink_run_args) if slots is None else slots)
        try:
            return subprocess.run(self.command(*flink_run_args), capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired as expired:  # its output as bytes, all of it
            out, err = (text.decode(errors="replace") if isinstance(text, bytes) else text or ""
                        for text in (expired.stdout, expired.stderr))
            raise AssertionError(f"the client did not end within {timeout:.0f} s (killed): "
                                 + self.summary(out, err)) from None

    def popen(self, command: Sequence[str], slots: int | None = None, **popen_args
              ) -> subprocess.Popen:
        """Start a job client (``command``: a ``scripts/flink-cluster run`` command line)
        once the cluster has the job's slots free; a client still running when the test's
        jobs are cancelled is stopped first."""
        self.require_free_slots(slots_needed(command) if slots is None else slots)
        client = subprocess.Popen(list(command), **popen_args)
        self._clients.append(client)
        return client

    def summary(self, stdout: str, stderr: str = "", returncode: int | None = None) -> str:
        """A client's output as one short block for a failure message; the whole output
        goes to a file the block names."""
        transcript = self.transcripts / f"client-{next(self._transcript_numbers):03d}.log"
        return summary(stdout, stderr, returncode=returncode, transcript=transcript)

    def summary_of(self, client: subprocess.CompletedProcess) -> str:
        return self.summary(client.stdout, client.stderr, client.returncode)

    # ------------------------------------------------------------------ after the test

    @contextmanager
    def cancelling_new_jobs(self, timeout: float = 90) -> Iterator[list[dict]]:
        """Everything submitted inside the block is cancelled when it ends, however it ends:
        the clients started by ``popen`` are stopped, then each job that was not on the
        cluster before the block and is not finished yet is cancelled (``PATCH
        /jobs/<id>?mode=cancel``) and awaited until it reached a terminal state. The yielded
        list receives the jobs that had to be cancelled."""
        before = {job["jid"] for job in self.jobs()}
        clients_before = len(self._clients)
        cancelled: list[dict] = []
        try:
            yield cancelled
        finally:
            self._stop_clients(clients_before)
            cancelled += self.cancel([job for job in self.jobs() if job["jid"] not in before],
                                     timeout)

    def _stop_clients(self, first: int) -> None:
        """Stop the clients started since ``first`` that still run (SIGTERM, SIGKILL after
        20 s): none of them submits a job after the test's jobs were cancelled."""
        for client in self._clients[first:]:
            if client.poll() is None:
                client.send_signal(signal.SIGTERM)
                try:
                    client.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    client.kill()
                    client.wait(timeout=20)
        del self._clients[first:]

    def cancel(self, jobs: list[dict], timeout: float = 90) -> list[dict]:
        """Cancel the unfinished ``jobs`` and wait until each reached a terminal state and
        the cluster got their slots back; answers the jobs that had to be cancelled."""
        unfinished = [job for job in jobs if job["state"] not in TERMINAL]
        for job in unfinished:
            self.rest(f"/jobs/{job['jid']}?mode=cancel", method="PATCH")
        deadline = time.monotonic() + timeout
        while True:
            states = {job["jid"]: job for job in self.jobs()}
            stuck = [states[job["jid"]] for job in unfinished
                     if states.get(job["jid"], {"state": "FINISHED"})["state"] not in TERMINAL]
            if not stuck:
                break
            if time.monotonic() > deadline:
                raise LeftoverJobError(
                    f"cancelled, still not stopped after {timeout:.0f} s: "
                    + "; ".join(f"{job['jid']} '{job['name']}' {job['state']}"
                                for job in stuck))
            time.sleep(0.5)
        if unfinished and not self.unfinished_jobs():  # their slots come back a moment later
            while time.monotonic() < deadline and self.slots()[0] < self.slots()[1]:
                time.sleep(0.5)
        return unfinished


def attach(folder: Path, transcripts: Path) -> Cluster:
    """A cluster that runs already (``scripts/flink-cluster start --dir folder``)."""
    state = dict(line.split("=", 1) for line in (folder / "cluster.env").read_text().split()
                 if "=" in line)
    return Cluster(folder, int(state["REST_PORT"]), None, 0.0, transcripts)

