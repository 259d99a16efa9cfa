"""Shared test configuration: Hypothesis profiles and the session-wide SparkSession."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Select with HYPOTHESIS_PROFILE=ci|dev|deep (default: ci).
settings.register_profile(
    "ci",
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
settings.register_profile(
    "deep",
    max_examples=2000,
    deadline=None,
    stateful_step_count=80,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One local[2] SparkSession for the whole run; only tests that request it pay
    for the JVM start-up (pyspark is imported here, not at module level)."""
    from traces.checking.session import get_spark

    session = get_spark()
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 for the whole run (tests/servers.py); its endpoint URL."""
    from servers import s3_server

    with s3_server(tmp_path_factory.mktemp("s3")) as endpoint:
        yield endpoint


@pytest.fixture(scope="session")
def bucket(s3_endpoint: str) -> str:
    """A bucket on the S3 server, as an s3:// URI."""
    import pyarrow.fs as pafs

    fs, name = pafs.FileSystem.from_uri(f"s3://traces-{os.getpid()}?endpoint_override={s3_endpoint}&allow_bucket_creation=true")
    fs.create_dir(name)
    return f"s3://{name}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups for pytest-xdist's ``--dist loadgroup``: ``make pytest`` runs two workers, and pytest
    alone uses about one core of the two (its user time is 0.9 of its wall time). Every test that
    uses Spark (the ``spark`` marker or fixture) runs on the same worker, so that the session-wide
    SparkSession is started once, not once per worker; each other test file runs whole on one
    worker, its module fixtures made once. A test that starts Spark itself (``flowspec check``
    called in the test's process) carries the marker too: a probe that wrapped ``get_spark``
    found eight without it, in test_traces_cli.py, test_agent.py and
    test_traces_environment.py, which ran beside the session on the other worker."""
    if not config.pluginmanager.hasplugin("xdist"):
        return  # pytest-xdist left out (``-p no:xdist``): no groups to read
    for item in items:
        uses_spark = "spark" in getattr(item, "fixturenames", ()) or item.get_closest_marker("spark") is not None
        item.add_marker(pytest.mark.xdist_group("spark" if uses_spark else item.nodeid.split("::")[0]))
