"""Reading a running job client's output to its end while the test does other things, and
summing it up in a few lines for a failure message."""

import re
import subprocess
import threading
from pathlib import Path


class ClientOutput:
    """A running client's stdout and stderr, read to their ends by two threads as lines come.

    Reading the first lines with ``readline()`` and the rest with ``communicate()`` loses
    what ``readline()`` had buffered beyond its line (``communicate()`` reads the raw pipe):
    that dropped 1 to 53 results in an earlier failover test, which then looked like outputs
    lost by the runtime. A pipe nobody reads also blocks the client once it holds 64 KB."""

    def __init__(self, client: subprocess.Popen):
        self._client = client
        self._out: list[str] = []
        self._err: list[str] = []
        self._results = 0
        self._ended = False
        self._changed = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(stream, lines))
                         for stream, lines in ((client.stdout, self._out),
                                               (client.stderr, self._err)) if stream is not None]
        for reader in self._readers:
            reader.start()

    def _read(self, stream, lines: list[str]) -> None:
        for line in stream:
            with self._changed:
                lines.append(line)
                if lines is self._out and line.startswith("RESULT "):
                    self._results += 1
                self._changed.notify_all()
        with self._changed:
            self._ended = self._ended or lines is self._out
            self._changed.notify_all()

    def wait_for_results(self, count: int, timeout: float) -> bool:
        """``True`` once ``count`` results were printed; ``False`` if the output ended first."""
        with self._changed:
            self._changed.wait_for(lambda: self._results >= count or self._ended, timeout)
            return self._results >= count

    def results(self) -> int:
        """How many ``RESULT`` lines were printed so far."""
        with self._changed:
            return self._results

    def finish(self, timeout: float) -> tuple[str, str]:
        """Wait for the client to exit; its whole stdout and stderr (empty when stderr
        went to stdout)."""
        self._client.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=60)
        return "".join(self._out), "".join(self._err)


SUBMITTED = re.compile(r"Job has been submitted with JobID ([0-9a-f]{32})")
# "pkg.SomeError: message", "Caused by: org.x.SomeException: message", "SomeError" alone
ERROR_LINE = re.compile(r"^(Caused by: )?[\w.$]*(Error|Exception|Exit)\b(:.*)?$")
# stack frames and the words between tracebacks
FRAME = re.compile(r"^(at |File \"|\.\.\. \d+ more|\^+$|~+$|Traceback \(most recent call last\)"
                   r"|The above exception was|During handling of the above exception)")


def _clip(line: str, width: int = 240) -> str:
    return line if len(line) <= width else line[:width - 3] + "..."


def summary(stdout: str, stderr: str = "", *, returncode: int | None = None,
            transcript: Path | None = None, errors: int = 4, last: int = 6) -> str:
    """A job client's output as one short block for a failure message: its exit code and
    job id, the distinct error lines (the last ``errors``; the root cause comes last), and
    the last ``last`` lines that are not stack frames. The whole output goes to
    ``transcript`` (0600), which the block names, instead of hundreds of lines."""
    lines = [line.strip() for line in (stdout + stderr).splitlines()]
    found: list[str] = []
    for line in lines:
        if ERROR_LINE.match(line):  # the same error again, "Caused by:" or not, moves last
            line = line.removeprefix("Caused by: ")
            found = [seen for seen in found if seen != line] + [line]
    told = [line for i, line in enumerate(lines)  # a Python frame's source line is a frame too
            if line and not FRAME.match(line) and not (i and lines[i - 1].startswith('File "'))]
    tail = [line for line in told if line.removeprefix("Caused by: ") not in found[-errors:]
            ][-last:]
    job_ids = submitted_job_ids(stdout + stderr)
    head = f"client exited {returncode}" if returncode is not None else "client output"
    head += f", job {', '.join(job_ids)}" if job_ids else ", no job submitted"
    head += f", {len(lines)} lines"
    if transcript is not None:
        transcript.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        transcript.touch(mode=0o600)
        transcript.write_text(stdout + ("\n--- stderr ---\n" + stderr if stderr else ""))
        head += f" (all of it in {transcript})"
    block = [head, "errors:", *(f"  {_clip(line)}" for line in found[-errors:] or ["none"]),
             "last lines:", *(f"  {_clip(line)}" for line in tail)]
    return "\n".join(block)


def submitted_job_ids(output: str) -> list[str]:
    """The ids of the jobs a ``flink run`` client says it submitted."""
    return SUBMITTED.findall(output)
