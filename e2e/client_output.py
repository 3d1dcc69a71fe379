"""Reading a running job client's output to its end while the test does other things."""

import subprocess
import threading


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

    def finish(self, timeout: float) -> tuple[str, str]:
        """Wait for the client to exit; its whole stdout and stderr (empty when stderr
        went to stdout)."""
        self._client.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=60)
        return "".join(self._out), "".join(self._err)
