"""``flowspec check`` on a real Spark cluster: a standalone master and one worker on 127.0.0.1,
started from the installed pyspark (tests/servers.py), working in a directory of their own.

The check runs as a user would run it, in its own process from another directory: inputs given
as relative paths, and ``s3://`` inputs that only the driver's environment can open, are judged
as ``local[2]`` judges them; the workers replay with the compiled spec that the session shipped
to them, not with a path of the driver's machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from servers import CLI_TIMEOUT, flowspec, s3_env, spark_cluster
from traces.checking.compiled import BUILD, COMPILED
from traces.cli import main
from traces.recording.examples import EXAMPLES
from traces.recording.record import record_workload

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.slow]

EXAMPLE_TRACES = ("conformant-5.3.3.jsonl", "conformant-retry-storm-limited.jsonl", "broken-lock_held_by_one_writer_at_a_time.jsonl", "faults-5.3.3.jsonl")

#: Run on the cluster's executor: where each compiled module of the spec was imported from.
_MODULES_ON_THE_WORKER = """
import importlib, json, sys
from traces.checking.compiled import COMPILED
from traces.checking.session import get_spark

def imported(_):
    yield {name: importlib.import_module(name.removesuffix(".py").replace("/", ".")).__file__ for name in COMPILED}

spark = get_spark(master=sys.argv[1])
print(json.dumps(spark.sparkContext.parallelize([0], 1).mapPartitions(imported).collect()[0]))
spark.stop()
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The master's URL and the worker's directory. The worker's environment names no object
    store: the executors can open s3:// inputs only with the settings the driver passes on."""
    directory = tmp_path_factory.mktemp("cluster")
    with spark_cluster(directory, {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}) as url:
        yield url, directory


def test_relative_paths_on_the_cluster_are_judged_as_local_2_judges_them(
    spark: SparkSession, cluster: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = cluster
    (tmp_path / "examples").mkdir()
    for name in EXAMPLE_TRACES:
        shutil.copy(EXAMPLES / name, tmp_path / "examples" / name)
    record_workload(tmp_path / "dataset", "retry-storm", "4.9.8", 400, traces=3, seed=50, row_group=300)
    remote = flowspec(["check", "examples", "dataset", "--master", url, "--json"], dict(os.environ), tmp_path)
    assert main(["check", str(tmp_path / "examples"), str(tmp_path / "dataset"), "--json"]) == remote.returncode == 1, remote.stderr[-3000:]
    local = json.loads(capsys.readouterr().out)
    assert json.loads(remote.stdout) == local
    assert {t["verdict"] for t in local["traces"]} == {"conformant", "violation"} and len(local["traces"]) == 7


def test_s3_inputs_on_the_cluster_are_opened_with_the_drivers_settings(
    cluster: tuple[str, Path], bucket: str, s3_endpoint: str, tmp_path: Path
) -> None:
    url, _ = cluster
    env = s3_env(s3_endpoint)
    recorded = flowspec(["record", "--workload", "steady", "--events", "200", "--traces", "2", "--out", f"{bucket}/cluster"], env, tmp_path)
    assert recorded.returncode == 0, recorded.stderr
    checked = flowspec(["check", f"{bucket}/cluster", "--master", url, "--json"], env, tmp_path)
    assert checked.returncode == 0, checked.stderr[-3000:]
    assert json.loads(checked.stdout)["totals"]["conformant"] == 2


def test_the_workers_replay_with_the_compiled_spec_the_session_shipped_to_them(cluster: tuple[str, Path], tmp_path: Path) -> None:
    url, worker = cluster
    run = subprocess.run([sys.executable, "-c", _MODULES_ON_THE_WORKER, url], cwd=tmp_path, capture_output=True, text=True, timeout=CLI_TIMEOUT, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    imported = json.loads(run.stdout.splitlines()[-1])
    assert set(imported) == set(COMPILED)
    for name, file in imported.items():
        assert file.endswith(".so") and file.startswith(str(worker / "work")) and "/flowspec-spec/" in file, f"{name} was imported from {file}"
        assert not file.startswith(str(BUILD))
