"""Build the SparkSession used by the trace tools and the tests.

One call per process is enough: Spark returns the running session on later calls
(`getOrCreate`), and JVM options such as ``spark.driver.memory`` only take effect for
the first session of a process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

from traces.checking.compiled import archive, compiled_path

#: log4j2 configuration that keeps the driver JVM quiet (errors only).
LOG4J2_CONFIG: Path = Path(__file__).resolve().with_name("log4j2.properties")

#: Settings applied to every session; ``conf`` passed to :func:`get_spark` overrides them.
DEFAULT_CONF: Mapping[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "2g",
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()}",
}


#: The build's directory in each executor's working directory, where Spark unpacks the archive.
SHIPPED_SPEC = "flowspec-spec"
#: The AWS SDK's settings (:mod:`traces.format.storage`) that executors on other machines are given.
AWS_SETTINGS = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")


def get_spark(
    master: str = "local[2]",
    app_name: str = "flowspec",
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """Return a SparkSession, creating it on first use.

    Python workers must run this environment's interpreter (else they cannot import
    pyarrow or this project), so ``PYSPARK_PYTHON`` defaults to ``sys.executable``. They import
    the spec compiled by mypyc when its build is up to date (:mod:`traces.checking.compiled`): in
    place with ``local[N]``; on a cluster, shipped as an archive that each executor unpacks in its
    working directory. Else they run the interpreted spec, and this says so on stderr. On a
    cluster the executors are also given this environment's AWS settings, to open ``s3://`` inputs.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    local = master.startswith("local")
    compiled, why = compiled_path() if local else archive()
    if compiled is None:
        print(f"flowspec: {why}; Spark's workers replay with the interpreted spec (slower)", file=sys.stderr)
    executors: dict[str, str] = {} if local else {f"spark.executorEnv.{k}": os.environ[k] for k in AWS_SETTINGS if k in os.environ}
    if compiled is not None:
        # PYTHONSAFEPATH: a worker would otherwise put its working directory (the source tree) first on its path.
        executors |= {"spark.executorEnv.PYTHONPATH": str(compiled) if local else SHIPPED_SPEC, "spark.executorEnv.PYTHONSAFEPATH": "1"}
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {**DEFAULT_CONF, **executors, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if compiled is not None and not local:
        # Added to whatever archives the application already ships (a packed environment, say).
        spark.sparkContext.addArchive(f"{compiled}#{SHIPPED_SPEC}")
    return spark
