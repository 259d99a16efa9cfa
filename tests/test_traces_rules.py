"""Every rule passes its passing example and flags its failing example, on Spark and (scan rules) outside Spark."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scan_oracle import events_table
from traces.recording.examples import BREAKS, EXAMPLES
from traces.format.records import header_from_record
from traces.format.read import read_records
from spec.invariants import known_defects
from traces.checking.check import KNOWN_DEFECT
from traces.checking.rules import RULES
from traces.checking.scan import scan_trace

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from traces.checking.check import CheckResult


def _records(name: str) -> list[dict[str, Any]]:
    return [r.data for r in read_records([str(EXAMPLES / name)])]


def test_every_rule_has_examples_and_a_described_break() -> None:
    for rule in RULES:
        assert (EXAMPLES / rule.passing).exists() and (EXAMPLES / rule.failing).exists(), rule.name
        assert rule.name in BREAKS and rule.failing == f"broken-{rule.name}.jsonl"


@pytest.mark.parametrize("rule", [r for r in RULES if r.body == "scan"], ids=lambda r: r.name)
def test_scan_rule_on_its_examples(rule: Any) -> None:
    good, bad = _records(rule.passing), _records(rule.failing)
    passed = scan_trace(header_from_record(good[0]), events_table(good[1:]))[rule.name]
    failed = scan_trace(header_from_record(bad[0]), events_table(bad[1:]))[rule.name]
    assert passed.checked > 0 and passed.violations == 0, (rule.name, passed.sample)
    assert failed.violations > 0 and failed.sample


@pytest.fixture(scope="module")
def checked(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    """One Spark check over every example (JSON Lines) plus one example as Parquet."""
    from traces.checking.check import run_check
    from traces.format.write import TraceWriter

    parquet = tmp_path_factory.mktemp("pq") / "dataset"
    with TraceWriter(parquet, row_group=100) as w:
        for r in _records("conformant-slow-disk.jsonl"):
            w.write({**r, "trace_id": "parquet-slow-disk"})
    return run_check(spark, [str(EXAMPLES), str(parquet)], series=True)


def _finding(result: CheckResult, trace_id: str, rule: str) -> dict[str, Any]:
    trace = next(t for t in result.traces if t.trace_id == trace_id)
    return next(f for f in trace.findings if f["rule"] == rule)


@pytest.mark.spark
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_rule_on_spark(checked: CheckResult, rule: Any) -> None:
    passing_id = _records(rule.passing)[0]["trace_id"]
    good = _finding(checked, passing_id, rule.name)
    bad = _finding(checked, f"broken-{rule.name}", rule.name)
    assert good["status"] == "pass", good
    # A break of a claim the failing example's own release breaks is reported as the release's defect.
    release = header_from_record(_records(rule.failing)[0]).config.profile
    expected = KNOWN_DEFECT if rule.claim in known_defects(release) else "violation"
    assert bad["status"] == expected and bad["sample"][0]["raw"], bad


@pytest.mark.spark
def test_verdicts_and_parquet(checked: CheckResult) -> None:
    verdicts = {t.trace_id: t.verdict for t in checked.traces}
    assert verdicts["parquet-slow-disk"] == "conformant"
    assert all(v == "conformant" for t, v in verdicts.items() if t.startswith(("steady", "slow-disk", "pool", "full", "retry")))
    assert all(v == "violation" for t, v in verdicts.items() if t.startswith("broken-") and t != "broken-begin_time_zero_when_lock_free")
    assert verdicts["broken-begin_time_zero_when_lock_free"] == "conformant"  # 5.3.3's own defect, reported as such
    assert checked.exit_code == 1
    series = next(t for t in checked.traces if t.trace_id == "parquet-slow-disk").series
    assert max(series["queue_depth"]["send"]) > 0 and series["answers"] and series["answers_by_topic"]


def test_examples_on_disk_are_what_the_generator_writes(tmp_path: Path) -> None:
    from traces.recording.examples import build

    for path in build(tmp_path):
        assert (EXAMPLES / path.name).read_bytes() == path.read_bytes(), f"{path.name} is stale: run python -m traces.recording.examples"
