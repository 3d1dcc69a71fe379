"""A failed job client's output in a failure message: one short block naming the job, the
project's error once and where the whole output is, not the client's 400 lines."""

import stat

from e2e.client_output import summary

JOB_ID = "e5a6debdb8983d5ba2fc31a4ca7e0886"
ERROR = ("flink_agents_ltm.api.memory.long_term_memory.LongTermMemoryError: cannot connect to "
         "the pgvector store at 127.0.0.1:5432/ltm: connection refused")


def failed_client_output() -> str:
    """The shape of a failed ``flink run -py``: the project's error repeated in a Python
    traceback inside each of several Java exceptions, each with its stack frames."""
    python = ["Traceback (most recent call last):",
              *[f'  File "/venv/pyflink/fn_execution/x{i}.py", line {i}, in run\n'
                f"    self._run_{i}(work)" for i in range(12)],
              ERROR, "", "The above exception was the direct cause of the following exception:"]
    java = [*python, *[f"\tat org.apache.flink.runtime.Task{i}.run(Task{i}.java:{i})"
                       for i in range(50)], "\t... 12 more"]
    return "\n".join([f"Job has been submitted with JobID {JOB_ID}",
                      "org.apache.flink.client.program.ProgramAbortException: "
                      "java.lang.RuntimeException: Python process exits with code: 1",
                      *java, "Caused by: java.lang.RuntimeException: Error received from SDK",
                      *java, *java, *java, *java, "Caused by: " + ERROR, *python]) + "\n"


def test_a_failed_clients_output_is_summed_up_in_a_few_lines_naming_the_job_and_its_error(
        tmp_path):
    output = failed_client_output()
    transcript = tmp_path / "client.log"
    block = summary(output, "the client's stderr\n", returncode=1, transcript=transcript)
    lines = block.splitlines()

    assert len(output.splitlines()) > 400
    assert len(lines) <= 14, block
    assert lines[0] == (f"client exited 1, job {JOB_ID}, {len(output.splitlines()) + 1} lines "
                        f"(all of it in {transcript})")
    assert sum(ERROR in line for line in lines) == 1, block  # once, however often it came
    assert lines[-1] == "  the client's stderr"
    assert not [line for line in lines if line.lstrip().startswith(("at ", "File "))], block
    assert transcript.read_text() == output + "\n--- stderr ---\nthe client's stderr\n"
    assert stat.S_IMODE(transcript.stat().st_mode) == 0o600


def test_the_summary_says_when_the_client_submitted_no_job():
    block = summary("Error: No such file or directory: 'job.py'\n", returncode=2)
    assert block.splitlines()[0] == "client exited 2, no job submitted, 1 lines"
