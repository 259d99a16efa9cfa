"""The example traces in ``traces/examples/``: conformant ones, and for every rule one that breaks it.

Each broken example is a conformant recording with one deliberate change, named after the rule
it must trip; the change is described in :data:`BREAKS`. Regenerate with
``python -m traces.recording.examples`` (the tests check the files are what this module writes).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from traces.recording.record import record_workload

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

Record = dict[str, Any]

#: (file, workload, profile, steps with arrivals) of the recorded examples; sizes chosen so that
#: each reaches the answers its rules check (steady at 600 steps gets [PCBUSY_CLEAN_QUEUE]).
CONFORMANT: tuple[tuple[str, str, str, int], ...] = (
    ("conformant-4.3.2.jsonl", "steady", "4.3.2", 300),
    ("conformant-4.9.8.jsonl", "faults", "4.9.8", 300),
    ("conformant-5.3.3.jsonl", "steady", "5.3.3", 600),
    ("conformant-slow-disk.jsonl", "slow-disk", "5.3.3", 300),
    ("conformant-pool-exhaustion.jsonl", "pool-exhaustion", "5.3.3", 300),
    ("conformant-full-send-queue.jsonl", "full-send-queue", "5.3.3", 300),
    ("conformant-retry-storm-limited.jsonl", "retry-storm-limited", "5.3.3", 300),
    ("faults-5.3.3.jsonl", "faults", "5.3.3", 300),
)


def _renumber(records: list[Record]) -> list[Record]:
    for i, r in enumerate(records):
        r["seq"] = i
    return records


def _first(records: list[Record], test: Callable[[Record], bool]) -> int:
    return next(i for i, r in enumerate(records) if test(r))


def _answers(r: Record) -> list[Record]:
    return list(r.get("responses") or [])


def _drop_an_answer(records: list[Record]) -> list[Record]:
    i = _first(records, lambda r: r["kind"] == "WorkerAppendsAndUnlocks")
    records[i]["responses"] = []
    return records


def _answer_a_stranger(records: list[Record]) -> list[Record]:
    i = _first(records, lambda r: bool(_answers(r)))
    records[i]["responses"][0]["request_id"] = 999_999
    return records


def _busy_as_success(records: list[Record]) -> list[Record]:
    i = _first(records, lambda r: any((x["remark"] or "").startswith("[") for x in _answers(r)))
    records[i]["responses"][0]["code"] = 0
    return records


def _header(change: Callable[[Record], None]) -> Callable[[list[Record]], list[Record]]:
    def apply(records: list[Record]) -> list[Record]:
        change(records[0]["config"])
        return records

    return apply


def _swap_two_answers(records: list[Record]) -> list[Record]:
    done = [i for i, r in enumerate(records) if r["kind"] in ("WorkerAppendsAndUnlocks", "WorkerProcessesRequest") and _answers(r)]
    a, b = done[0], done[1]
    ra, rb = records[a]["responses"][0], records[b]["responses"][0]
    ra["request_id"], rb["request_id"] = rb["request_id"], ra["request_id"]
    return records


def _insert_after(kind: str, new: Record) -> Callable[[list[Record]], list[Record]]:
    def apply(records: list[Record]) -> list[Record]:
        i = _first(records, lambda r: r["kind"] == kind)
        records.insert(i + 1, {"trace_id": records[i]["trace_id"], "seq": 0, "ts": records[i]["ts"], **new, "responses": []})
        return _renumber(records)

    return apply


def _set(key: str, value: object) -> Callable[[Record], None]:
    def change(config: Record) -> None:
        config[key] = value

    return change


def _set_capacity(config: Record) -> None:
    for e in config["executors"]:
        if e["name"] == "send":
            e["capacity"] = 2


#: rule -> (conformant example it starts from, the change, what the change is).
BREAKS: dict[str, tuple[str, Callable[[list[Record]], list[Record]], str]] = {
    "each_request_is_answered_exactly_once": ("conformant-5.3.3.jsonl", _drop_an_answer, "the first SUCCESS of a put is not written"),
    "no_response_before_its_request": ("conformant-5.3.3.jsonl", _answer_a_stranger, "the first response names an opaque that never arrived"),
    "responses_carry_the_profile_codes_and_remarks": ("conformant-slow-disk.jsonl", _busy_as_success, "the first busy answer carries code SUCCESS"),
    "timeout_only_after_the_queue_wait": ("conformant-full-send-queue.jsonl", _header(_set("queue_waits", {"send": 5000, "admin": 500})), "the header claims a send-queue wait of 5000 ms"),
    "pcbusy_only_while_busy": ("conformant-5.3.3.jsonl", _header(_set("os_page_cache_busy_timeout_ms", 100_000)), "the header claims a busy timeout of 100 s"),
    "rejectrequest_only_while_busy_or_deficient": ("conformant-pool-exhaustion.jsonl", _header(_set("transient_store_pool_size", 20)), "the header claims a pool of 20 buffers"),
    "no_queue_over_capacity": ("conformant-full-send-queue.jsonl", _header(_set_capacity), "the header claims a send queue of capacity 2"),
    "fifo_service_per_queue": ("conformant-5.3.3.jsonl", _swap_two_answers, "the first two workers' answers are swapped"),
    "lock_held_by_one_writer_at_a_time": ("conformant-5.3.3.jsonl", _insert_after("WorkerAcquiresPutLock", {"kind": "HaServiceAcquiresPutLock"}), "the HA service takes the lock while a worker holds it"),
    "begin_time_zero_when_lock_free": ("faults-5.3.3.jsonl", lambda r: r, "none: 5.3.3 really leaves beginTimeInLock set after an exception (the spec allows it)"),
    "buffers_conserved_and_returned_only_at_full_commit": ("conformant-pool-exhaustion.jsonl", _insert_after("WorkerCreatesMappedFile", {"kind": "CommitServiceReturnsBuffer"}), "a buffer is returned right after its file is created"),
    "fast_failure_runs_10ms_apart_while_enabled": ("conformant-5.3.3.jsonl", _header(_set("fast_failure_period_ms", 20)), "the header claims a 20 ms period"),
    "limiter_decisions_as_the_bucket_says": ("conformant-retry-storm-limited.jsonl", _header(lambda c: c["rate_limit"].update(send_msg_back_qps=100000.0)), "the header claims 100000 qps for send-backs"),
}


def _read(path: Path) -> list[Record]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, records: list[Record]) -> None:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))


def build(out: Path) -> list[Path]:
    """Write every example to ``out``; the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, workload, version, events in CONFORMANT:
        record_workload(out / name, workload, version, events)
        written.append(out / name)
    for rule, (base, change, _) in BREAKS.items():
        records = change(_read(out / base))
        for r in records:
            r["trace_id"] = f"broken-{rule}"
        path = out / f"broken-{rule}.jsonl"
        _write(path, records)
        written.append(path)
    return written


def main() -> int:
    """Regenerate ``traces/examples/``; with ``--check``, only say whether it is up to date."""
    if "--check" in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            stale = [p.name for p in build(Path(tmp)) if not (EXAMPLES / p.name).exists() or (EXAMPLES / p.name).read_bytes() != p.read_bytes()]
        print("stale: " + ", ".join(stale) if stale else "examples up to date")
        return 1 if stale else 0
    for p in build(EXAMPLES):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
