"""The per-event scan of every scan rule: the differential oracle of :mod:`traces.checking.scan`.

This is the rules' first implementation, a Python loop over a trace's events that follows the
state step by step. :mod:`traces.checking.scan` judges the same rules with array operations; the test in
``test_traces_scan.py`` runs both over every example and over recorded workloads and compares
their counts. It lives with the tests because nothing in the package runs it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spec import commitservice, environment, fastfailure, remoting, storepool, workers
from spec.codes import (
    OVERLOAD_REMARK,
    PC_SYNCHRONIZED_REMARK,
    REJECT_REQUEST_REMARK,
    parse_clean_queue_remark,
    parse_rate_limit_remark,
    RequestCode,
    ResponseCode,
)
from spec.config import BrokerConfig
from spec.limiter import circuit_breaker_acquire, create_bucket
from spec.profiles import ExecutorName
from spec.putlock import (
    FREE_LOCK,
    HA_SERVICE,
    acquire_for_ha,
    acquire_for_put,
    is_os_page_cache_busy,
    PutLock,
    release_after_put,
    release_for_ha,
    throw_inside_lock,
)
from spec.remoting import route
from spec.state import MappedFile
from spec.workers import busy_answer, holder_of
from traces.format.records import TraceHeader
from traces.checking.rules import LEVEL_ORDER, SAMPLE, SCAN_RULES



@dataclass
class Finding:
    """One rule on one trace: how many things it checked, how many broke, a sample of the breaks."""

    checked: int = 0
    violations: int = 0
    sample: list[tuple[int, str]] = field(default_factory=list)  # (seq, detail)

    def check(self, ok: bool, seq: int, detail: Callable[[], str]) -> None:
        """Count one checked item; remember it if it broke."""
        self.checked += 1
        if not ok:
            self.violations += 1
            if len(self.sample) < SAMPLE:
                self.sample.append((seq, detail()))


# -- Scan rules ----------------------------------------------------------------------------------

_DEQUEUE_KINDS = {workers.WorkerTakesTask.__name__, workers.WorkerDiscardsCancelledTask.__name__, workers.WorkerRunsForeignTask.__name__}


@dataclass
class _Request:
    opaque: int
    code: int
    topic: str
    created: int | None = None  # remoting.DispatchCreatesTask's ts (RequestTask.createTimestamp)


class TraceScanner:
    """Follows one trace in seq order for every scan rule."""

    def __init__(self, header: TraceHeader) -> None:
        self.header = header
        self.config: BrokerConfig = header.config
        self.level = LEVEL_ORDER[header.observation]
        self.findings = {name: Finding() for name in SCAN_RULES}
        self.io: dict[int, _Request] = {}  # remoting thread -> the request it is dispatching
        self.queues: dict[str, deque[_Request | None]] = {e.name.value: deque() for e in self.config.executors}
        self.on_worker: dict[tuple[str, int], _Request | None] = {}
        self.workers_started: dict[str, int] = {}  # executor -> threads created so far
        self.waits = {q.value: w for q, w in self.config.queue_waits}
        self.cleaned = set(self.waits)  # the queues fast failure cleans
        self.lock: PutLock = FREE_LOCK
        self.files: tuple[MappedFile, ...] = ()
        pool = self.config.transient_store_pool_size if self.config.pool_enabled else 0
        self.available: tuple[int, ...] = tuple(range(pool))
        self.runs = 0
        self.ff_enabled = self.config.fast_failure_enable
        self.buckets: dict[str, tuple[int, Any]] = {}  # topic -> (created_at, TokenBucket)
        self.by_opaque: dict[int, _Request] = {}  # every request that arrived, by its opaque (the first, if reused)

    # helpers
    def _busy(self, now: int) -> bool:
        return is_os_page_cache_busy(self.lock, now, self.config.os_page_cache_busy_timeout_ms)

    def _executor_of(self, req: _Request) -> str | None:
        name = route(self.config, req.code)
        return name.value if name is not None else None

    def _dequeue(self, executor: str, seq: int, expected_opaque: int | None) -> _Request | None:
        queue = self.queues.get(executor)
        fifo = self.findings["fifo_service_per_queue"]
        if not queue:
            fifo.check(False, seq, lambda: f"{executor} queue is empty, yet an element left it")
            return None
        head = queue.popleft()
        if expected_opaque is not None:
            got = head.opaque if head is not None else None
            fifo.check(got == expected_opaque, seq, lambda: f"{executor} queue head is opaque {got}, the answer went to opaque {expected_opaque}")
        return head

    def event(self, seq: int, ts: int, kind: str, row: Mapping[str, Any]) -> None:
        """Follow one event."""
        responses = row.get("responses") or []
        f = self.findings
        io: int = row["io_thread"] if row.get("io_thread") is not None else -1
        if kind == remoting.RequestArrives.__name__:
            self.io[io] = _Request(row["request_id"], row["code"], row["topic"] or "")
            self.by_opaque.setdefault(row["request_id"], self.io[io])
        elif kind in (remoting.RateLimitHandlerAdmits.__name__, remoting.RateLimitHandlerThrottles.__name__):
            self._limiter(seq, ts, kind, self.io.get(io))
            if kind == remoting.RateLimitHandlerThrottles.__name__:
                self.io.pop(io, None)
        elif kind == remoting.DispatchCreatesTask.__name__:
            req = self.io.get(io)
            if req is not None:
                req.created = ts
        elif kind == remoting.DispatchQueuesTask.__name__:
            req = self.io.pop(io, None)
            name = self._executor_of(req) if req is not None else None
            if name is not None and req is not None:
                self.queues[name].append(req)
                cap = self.config.executor(ExecutorName(name)).capacity
                depth = len(self.queues[name])
                f["no_queue_over_capacity"].check(cap is None or depth <= cap, seq, lambda: f"{name} queue holds {depth} > capacity {cap}")
        elif kind == remoting.DispatchStartsWorker.__name__:
            req = self.io.pop(io, None)
            if req is not None:
                name = self._executor_of(req)
                if name is not None:
                    index = self.workers_started.get(name, 0)
                    self.workers_started[name] = index + 1
                    self.on_worker[(name, index)] = req
        elif kind in (remoting.DispatchAnswersNotSupported.__name__, remoting.DispatchRejectsRequest.__name__, remoting.DispatchRejectsOverload.__name__, remoting.RateLimitHandlerThrottles.__name__):
            self.io.pop(io, None)
        elif kind == environment.InternalTaskSubmitted.__name__:
            self.queues[row["executor"]].append(None)
        elif kind in _DEQUEUE_KINDS:
            head = self._dequeue(row["executor"], seq, None)
            self.on_worker[(row["executor"], row["worker"])] = head if kind == workers.WorkerTakesTask.__name__ else None
        elif kind == fastfailure.FastFailureDrainsBusySendQueue.__name__:
            opaque = responses[0]["request_id"] if responses else None
            self._dequeue(ExecutorName.SEND.value, seq, opaque)
        elif kind == fastfailure.FastFailureDropsForeignElement.__name__:
            self._dequeue(ExecutorName.SEND.value, seq, None)
        elif kind == fastfailure.FastFailureCleansExpiredHead.__name__:
            opaque = responses[0]["request_id"] if responses else None
            if self._dequeue(row["queue"], seq, opaque) is not None:
                self._timeout(seq, ts, row["queue"], responses)
        elif kind in (fastfailure.FastFailureStartsRun.__name__, fastfailure.FastFailureSkipsRun.__name__):
            c = self.config
            earliest = c.start_time_ms + c.fast_failure_initial_delay_ms + self.runs * c.fast_failure_period_ms
            k = self.runs
            on = self.ff_enabled or not c.profile.fast_failure_switch
            f["fast_failure_runs_10ms_apart_while_enabled"].check(
                ts >= earliest and on == (kind == fastfailure.FastFailureStartsRun.__name__),
                seq,
                lambda: f"run {k} ({kind}) at ts {ts}: due no earlier than {earliest}, switch {'on' if on else 'off'}",
            )
            self.runs += 1
        elif kind == environment.OperatorSetsFastFailureEnable.__name__:
            self.ff_enabled = row["enabled"]
        elif kind == environment.OperatorSetsQueueWait.__name__:
            self.waits[row["queue"]] = row["wait_ms"]
        if kind in (workers.WorkerProcessesRequest.__name__, workers.WorkerFindsPageCacheBusy.__name__, workers.WorkerAppendsAndUnlocks.__name__, workers.WorkerThrowsInsideLock.__name__):
            key = (row["executor"], row["worker"])
            req = self.on_worker.pop(key, None)
            for r in responses:
                got = req.opaque if req is not None else None
                f["fifo_service_per_queue"].check(
                    got is None or r["request_id"] == got, seq, lambda: f"worker {key} took opaque {got} but answered opaque {r['request_id']}"
                )
        self._lock_and_pool(seq, ts, kind, row)
        for r in responses:
            parsed = parse_clean_queue_remark(r["remark"] or "")
            if parsed is not None and parsed[0] == "PCBUSY_CLEAN_QUEUE" and self.level >= 2:
                f["pcbusy_only_while_busy"].check(self._busy(ts), seq, lambda: f"[PCBUSY_CLEAN_QUEUE] at ts {ts} with beginTimeInLock {self.lock.begin_time_in_lock}: not busy")
            if r["remark"] == REJECT_REQUEST_REMARK and self.level >= 2:
                busy = self._busy(ts)
                deficient = storepool.is_transient_store_pool_deficient(self.available, self.config.pool_enabled)
                f["rejectrequest_only_while_busy_or_deficient"].check(
                    busy or deficient, seq, lambda: f"[REJECTREQUEST] at ts {ts}: not busy (beginTimeInLock {self.lock.begin_time_in_lock}) and {len(self.available)} buffers available"
                )

    def _timeout(self, seq: int, ts: int, queue: str, responses: Sequence[Mapping[str, Any]]) -> None:
        """Each answer against the task it went to (the head, unless the cleaner took another)."""
        finding = self.findings["timeout_only_after_the_queue_wait"]
        for r in responses:
            parsed = parse_clean_queue_remark(r["remark"] or "")
            task = self.by_opaque.get(r["request_id"])
            if queue not in self.cleaned:
                version = self.config.profile.version
                finding.check(False, seq, lambda: f"[TIMEOUT_CLEAN_QUEUE] answer from the {queue} queue, which release {version}'s fast failure does not clean")
                continue
            if parsed is None or task is None or task.created is None:
                finding.check(False, seq, lambda: f"[TIMEOUT_CLEAN_QUEUE] answer for a task with no creation time or an unparsable remark {r['remark']!r}")
                continue
            _, period, size = parsed
            waited, wait, depth = ts - task.created, self.waits[queue], len(self.queues[queue])
            finding.check(
                period == waited and waited >= wait and size == depth,
                seq,
                lambda: f"{queue} task waited {waited} ms (wait {wait}), queue size after {depth}; remark says period {period}, size {size}",
            )

    def _lock_and_pool(self, seq: int, ts: int, kind: str, row: Mapping[str, Any]) -> None:
        if self.level < 2:
            return
        f = self.findings
        one = f["lock_held_by_one_writer_at_a_time"]
        holder = holder_of(ExecutorName(row["executor"]), row["worker"]) if row.get("worker") is not None else None
        if kind in (workers.WorkerAcquiresPutLock.__name__, environment.HaServiceAcquiresPutLock.__name__):
            one.check(self.lock.holder is None, seq, lambda: f"{kind} while {self.lock.holder} holds the lock")
            self.lock = acquire_for_put(self.lock, holder, ts) if holder is not None else acquire_for_ha(self.lock)
        elif kind in (workers.WorkerAppendsAndUnlocks.__name__, workers.WorkerThrowsInsideLock.__name__, environment.HaServiceReleasesPutLock.__name__):
            who = holder if holder is not None else HA_SERVICE
            one.check(self.lock.holder == who, seq, lambda: f"{kind} by {who} while the holder is {self.lock.holder}")
            if kind == workers.WorkerAppendsAndUnlocks.__name__:
                self.lock = release_after_put(self.lock)
                self._append(seq)
            elif kind == workers.WorkerThrowsInsideLock.__name__:
                self.lock = throw_inside_lock(self.lock, self.config.profile.begin_time_reset_in_finally)
            else:
                self.lock = release_for_ha(self.lock)
            if kind != environment.HaServiceReleasesPutLock.__name__:
                f["begin_time_zero_when_lock_free"].check(
                    self.lock.begin_time_in_lock == 0, seq, lambda: f"{kind} left beginTimeInLock = {self.lock.begin_time_in_lock} with the lock free"
                )
        pool = f["buffers_conserved_and_returned_only_at_full_commit"]
        size = self.config.mapped_file_size
        if kind == workers.WorkerCreatesMappedFile.__name__:
            self.files, self.available = storepool.create_mapped_file(self.files, self.available, self.config.pool_enabled, size)
        elif kind == commitservice.CommitServiceCommits.__name__:
            at = storepool.file_to_commit(self.files, size)
            pool.check(at is not None, seq, lambda: "a commit with nothing to commit")
            if at is not None:
                self.files = storepool.commit_file(self.files, at)
        elif kind == commitservice.CommitServiceReturnsBuffer.__name__:
            at = storepool.file_awaiting_return(self.files, size)
            pool.check(at is not None, seq, lambda: f"a buffer returned while no file is committed to its size {size}: {self.files}")
            if at is not None:
                self.files, self.available = storepool.return_committed_buffer(self.files, self.available, at)

    def _append(self, seq: int) -> None:
        if self.files and self.files[-1].wrote < self.config.mapped_file_size:
            self.files = storepool.append_message(self.files, self.config.mapped_file_size)

    def _limiter(self, seq: int, ts: int, kind: str, req: _Request | None) -> None:
        finding = self.findings["limiter_decisions_as_the_bucket_says"]
        rl = self.config.rate_limit
        if not rl.enabled or req is None:
            finding.check(False, seq, lambda: f"{kind} with the limiter {'off' if not rl.enabled else 'on but no request on that thread'}")
            return
        created, bucket = self.buckets.get(req.topic, (ts, None))
        if bucket is None:
            qps = rl.send_msg_back_qps if req.code == RequestCode.CONSUMER_SEND_MSG_BACK else rl.default_qps
            bucket = create_bucket(qps)
        admitted, bucket = circuit_breaker_acquire(bucket, (ts - created) * 1000, rl.circuit_breaker_open_micros)
        self.buckets[req.topic] = (created, bucket)
        finding.check(
            admitted == (kind == remoting.RateLimitHandlerAdmits.__name__),
            seq,
            lambda: f"topic {req.topic!r} at ts {ts}: the bucket {'admits' if admitted else 'throttles'}, the trace {kind}",
        )


def scan_trace(header: TraceHeader, rows: Iterable[Mapping[str, Any]]) -> dict[str, Finding]:
    """Run every scan rule over one trace's events (in seq order)."""
    scanner = TraceScanner(header)
    for row in rows:
        scanner.event(row["seq"], row["ts"], row["kind"], row)
    return scanner.findings


def events_table(rows: Sequence[Mapping[str, Any]]) -> Any:
    """One trace's event records (dicts, in seq order) as the Arrow table traces.checking.scan reads."""
    import pyarrow as pa

    from traces.format.records import ARROW_SCHEMA
    from traces.checking.scan import SCAN_COLUMNS

    schema = pa.schema([ARROW_SCHEMA.field(c) for c in SCAN_COLUMNS])
    return pa.Table.from_pylist([{c: r.get(c) for c in SCAN_COLUMNS} for r in rows], schema=schema)
