"""`java-bridge/run-local --help` ends its own text with the exact `java` command it runs:
Flink's --add-opens options for Java 17 spelled out, this venv's Python, no placeholder."""

from __future__ import annotations

import subprocess

from tests.job_runner import ROOT


def test_run_local_help_prints_the_real_java_line():
    result = subprocess.run([str(ROOT / "java-bridge" / "run-local"), "--help"],
                            capture_output=True, text=True, timeout=300)
    text = result.stdout.split("MemoryAgentJob: the customer-memory agent")[0]
    (line,) = [line for line in text.splitlines() if "org.flinkagents.ltm.job.MemoryAgentJob" in
               line and "--add-opens" in line]
    for option in ("--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
                   "--add-opens=java.base/java.lang=ALL-UNNAMED",
                   "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED"):
        assert f" {option} " in line, line
    assert "<" not in line.replace("<version>", ""), line
    assert "/pyflink/opt/flink-python-" in line and "--python " in line
