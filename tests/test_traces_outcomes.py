"""Source 004's retry storm, recorded from the reference: without the limiter every topic is
failed by fast failure; with it the flooding retry topic is throttled and the others are served."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from traces.format.answers import answer_tag
from traces.reporting.outcomes import main, outcomes
from traces.format.read import read_records
from traces.recording.record import record_workload

RETRY = "%RETRY%get-pugc-to-ai-consumer"


def _answers(tmp_path: Path, workload: str) -> Counter[tuple[str, str]]:
    out = tmp_path / f"{workload}.jsonl"
    record_workload(out, workload, "5.3.3", 1500)
    (counts,) = outcomes(read_records([str(out)])).values()
    return counts


def _share(c: Counter[tuple[str, str]], topic: str, tag: str) -> float:
    total = sum(n for (t, _), n in c.items() if t == topic)
    return c[(topic, tag)] / total


def test_the_storm_fails_every_topic_and_the_limiter_shields_the_others(tmp_path: Path) -> None:
    storm = _answers(tmp_path, "retry-storm")
    limited = _answers(tmp_path, "retry-storm-limited")
    for topic in ("TopicOrders", "TopicPayments"):
        assert _share(storm, topic, "[TIMEOUT_CLEAN_QUEUE]") > 0.25, storm
        assert _share(limited, topic, "SUCCESS") > 0.8, limited
        assert limited[(topic, "[RateLimit]")] == 0
    assert _share(limited, RETRY, "[RateLimit]") > 0.5, limited
    assert storm[(RETRY, "[RateLimit]")] == 0


def test_answer_tags() -> None:
    assert answer_tag(2, "[OVERLOAD]system busy, start flow control for a while") == "[OVERLOAD]"
    assert answer_tag(0, None) == "SUCCESS"
    assert answer_tag(1, "OS_PAGE_CACHE_BUSY") == "SYSTEM_ERROR"
    assert answer_tag(777, None) == "code 777"


def test_unreadable_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    assert main([str(bad)]) == 2
    assert "bad.jsonl" in capsys.readouterr().err
