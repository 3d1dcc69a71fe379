"""A thread that dies of a cancelled gRPC stream prints nothing on standard error once a job
has installed the one-line error hook: in a local run PyFlink's Python worker runs in the
script's own process, and when the job failed, the reader thread of its data plane (Beam)
printed ~20 lines of ``StatusCode.CANCELLED "Multiplexer hanging up"`` between the job's
lines. ``FLINK_AGENTS_LTM_VERBOSE=1`` still prints it; any other thread's error is printed
as before. A real gRPC server and channel on 127.0.0.1: the channel is closed under a thread
reading a stream from it."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r'''
import sys, threading, time
from concurrent import futures

import grpc

from flink_agents_ltm.api.job_errors import JobFailureShaper, install_excepthook

install_excepthook(JobFailureShaper("job", sys.argv[1]))


def stream(request, context):
    while context.is_active():
        yield b"x"
        time.sleep(0.01)


server = grpc.server(futures.ThreadPoolExecutor(2))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
    "svc", {"m": grpc.unary_stream_rpc_method_handler(stream)}),))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
channel = grpc.insecure_channel(f"127.0.0.1:{port}")
reading = threading.Event()


def read():
    for _ in channel.unary_stream("/svc/m")(b""):
        reading.set()


reader = threading.Thread(target=read, name="read_grpc_client_inputs")
reader.start()
assert reading.wait(10)
channel.close()
reader.join(10)


def fail():
    raise ValueError("a worker thread's own error")


other = threading.Thread(target=fail, name="other")
other.start()
other.join()
server.stop(0)
print("DONE")
'''


def run(tmp_path, verbose=False):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    if verbose:
        env["FLINK_AGENTS_LTM_VERBOSE"] = "1"
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "home")], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "DONE", result.stderr
    return result.stderr


def test_a_thread_ended_by_a_cancelled_stream_prints_nothing_other_threads_errors_do(tmp_path):
    stderr = run(tmp_path)
    assert "CANCELLED" not in stderr and "read_grpc_client_inputs" not in stderr, stderr
    assert stderr.count("Traceback") == 1, stderr  # the other thread's
    assert "Exception in thread other" in stderr
    assert "ValueError: a worker thread's own error" in stderr


def test_verbose_prints_the_cancelled_streams_thread_too(tmp_path):
    stderr = run(tmp_path, verbose=True)
    assert "Exception in thread read_grpc_client_inputs" in stderr
    assert "StatusCode.CANCELLED" in stderr
    assert stderr.count("Traceback") == 2, stderr
