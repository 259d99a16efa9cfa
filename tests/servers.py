"""Servers on 127.0.0.1 that a test starts and always stops, each within a time limit: an
S3-compatible store (moto's server) and a Spark standalone master with one worker, started from
the installed pyspark as an operator would (``spark-class``)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
#: Seconds a server may take to be ready, and to stop.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
#: Credentials moto accepts; the region names no real one, so nothing is looked up elsewhere.
S3_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


#: Seconds a ``flowspec`` command may take.
CLI_TIMEOUT = 180


def flowspec(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The ``flowspec`` command in a process of its own: a check there gets its own Spark session
    (the tests' session is local[2]) and its own environment (a JVM keeps the one it started with)."""
    command = [sys.executable, "-c", "import sys; from traces.cli import main; sys.exit(main())", *args]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=CLI_TIMEOUT, check=False)


def s3_env(endpoint: str) -> dict[str, str]:
    """This environment with moto's credentials and ``endpoint``."""
    return {**os.environ, **S3_ENVIRONMENT, "AWS_ENDPOINT_URL": endpoint}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def running(command: list[str], log: Path, ready: Callable[[], bool], cwd: Path, env: dict[str, str]) -> Iterator[None]:
    """``command`` running (in its own process group, output to ``log``) once ``ready()`` holds;
    stopped with its children (Spark's executors) on exit: SIGTERM, then SIGKILL after STOP_TIMEOUT."""
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command[-1]} did not start (exit {process.poll()}); its log ends:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(STOP_TIMEOUT)


@contextmanager
def s3_server(directory: Path) -> Iterator[str]:
    """moto's S3 server; yields its endpoint URL."""
    port = free_port()
    command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    with running(command, directory / "moto.log", lambda: _accepts(port), directory, dict(os.environ)):
        yield f"http://127.0.0.1:{port}"


@contextmanager
def spark_cluster(directory: Path, env: dict[str, str]) -> Iterator[str]:
    """A Spark standalone master and one worker (1 core, 1 GiB), working in ``directory``; yields the master URL."""
    spark_env = {**env, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    master = [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", "0"]
    worker_log = directory / "worker.log"
    worker = [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1", "--memory", "1g"]
    worker += ["--webui-port", "0", "--work-dir", str(directory / "work"), url]
    with ExitStack() as stack:
        stack.enter_context(running(master, directory / "master.log", lambda: _accepts(port), directory, spark_env))
        registered = lambda: "Successfully registered with master" in worker_log.read_text(errors="replace")  # noqa: E731
        stack.enter_context(running(worker, worker_log, registered, directory, spark_env))
        yield url
