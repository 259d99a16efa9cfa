"""Progress on stderr: a phase's Spark tasks, done out of total; nothing when it is off."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from traces.checking.progress import Progress

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.mark.spark
def test_a_phase_shows_its_tasks_done_out_of_total(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    progress = Progress(spark, enabled=True)
    with progress.phase("rules"):
        assert spark.sparkContext.parallelize(range(6), 3).map(lambda x: x * 2).sum() == 30
    err = capsys.readouterr().err
    assert "rules" in err and "3/3" in err


@pytest.mark.spark
def test_a_phase_is_quiet_when_progress_is_off(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    with Progress(spark, enabled=False).phase("replay"):
        assert spark.sparkContext.parallelize(range(4), 2).count() == 4
    assert capsys.readouterr().err == ""


@pytest.mark.spark
def test_a_check_shows_validation_then_the_rules(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    """Validation runs in Spark tasks too, as a phase of its own before the rules."""
    from traces.checking.check import run_check
    from traces.recording.examples import EXAMPLES

    run_check(spark, [str(EXAMPLES / "conformant-5.3.3.jsonl"), str(EXAMPLES / "conformant-4.3.2.jsonl")], replay=False, progress=True)
    err = capsys.readouterr().err
    assert 0 <= err.index("validation") < err.index("rules") and "2/2" in err
