"""Named declarative checks over traces: each rule is a claim, checked on Spark.

A rule has a name that reads as a claim, a one-sentence description, its source, the
observation level it needs, the event kinds it reads, and a passing and a failing example
(``traces/examples/``) that its test runs. A trace observed below a rule's level makes that
rule "inconclusive", never "pass"; so does a trace with nothing for the rule to check.

Two kinds of rule bodies:
- *frame* rules are Spark DataFrame functions over all traces at once (joins and group-bys on
  arrivals and responses): the black-box rules.
- *scan* rules follow one trace in ``seq`` order, tracking only what the rule needs (a queue's
  request ids, the put lock, the pool's buffers, the fast-failure schedule, the limiter's
  buckets) with the spec's own pure helpers (``spec.putlock``, ``spec.storepool``,
  ``spec.limiter``), never the spec's ``step``. Spark runs them per trace with ``applyInArrow``
  on a projection of the columns they read; :func:`scan_trace` runs them in plain Python too.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spec.codes import (
    OVERLOAD_REMARK,
    PC_SYNCHRONIZED_REMARK,
    REJECT_REQUEST_REMARK,
    RequestCode,
    ResponseCode,
    parse_clean_queue_remark,
    parse_rate_limit_remark,
)
from spec.config import BrokerConfig
from spec.limiter import circuit_breaker_acquire, create_bucket
from spec.profiles import ExecutorName
from spec.putlock import (
    FREE_LOCK,
    HA_SERVICE,
    PutLock,
    acquire_for_ha,
    acquire_for_put,
    is_os_page_cache_busy,
    release_after_put,
    release_for_ha,
    throw_inside_lock,
)
from spec.remoting import route
from spec.storepool import (
    append_message,
    buffers_partition_the_pool,
    create_mapped_file,
    file_awaiting_return,
    file_to_commit,
    is_transient_store_pool_deficient,
    return_committed_buffer,
    commit_file,
)
from spec.state import MappedFile
from spec.workers import busy_answer, holder_of
from traces.format import Observation, TraceHeader

LEVEL_ORDER = {Observation.BLACK_BOX: 0, Observation.QUEUES: 1, Observation.FULL: 2}
SAMPLE = 5  # violating events kept per rule and trace


@dataclass(frozen=True)
class Rule:
    """One named check."""

    name: str  # a claim that reads true
    description: str  # one sentence
    source: str  # where the claim comes from
    level: Observation  # the observation level the rule needs
    body: str  # "frame" (Spark DataFrame function) or "scan" (per-trace, in seq order)
    passing: str  # example trace (under traces/examples/) the rule passes
    failing: str  # example trace the rule must flag


RULES: tuple[Rule, ...] = (
    Rule(
        "each_request_is_answered_exactly_once",
        "At trace end every request has one response, except oneway requests and codes the profile answers with silence, which have at most one.",
        "spec.invariants.settles_once_arrivals_stop; semantics.md 1.1, 1.2",
        Observation.BLACK_BOX,
        "frame",
        "conformant-5.3.3.jsonl",
        "broken-each_request_is_answered_exactly_once.jsonl",
    ),
    Rule(
        "no_response_before_its_request",
        "Every response answers a request that arrived earlier in the same trace.",
        "RemotingCommand.opaque echoes the request (semantics.md 1.1)",
        Observation.BLACK_BOX,
        "frame",
        "conformant-5.3.3.jsonl",
        "broken-no_response_before_its_request.jsonl",
    ),
    Rule(
        "responses_carry_the_profile_codes_and_remarks",
        "Every busy answer has the code and the verbatim remark its code path writes in the trace's profile.",
        "spec.invariants.responses_carry_the_profile_code_and_remark; semantics.md 4.6, 5.2",
        Observation.BLACK_BOX,
        "frame",
        "conformant-5.3.3.jsonl",
        "broken-responses_carry_the_profile_codes_and_remarks.jsonl",
    ),
    Rule(
        "timeout_only_after_the_queue_wait",
        "A [TIMEOUT_CLEAN_QUEUE] answer goes to a task that waited at least its queue's wait, and its remark reports that wait and the queue size after removal.",
        "spec.invariants.timeout_answers_only_after_the_queue_wait; BrokerFastFailure.cleanExpiredRequestInQueue",
        Observation.QUEUES,
        "scan",
        "conformant-full-send-queue.jsonl",
        "broken-timeout_only_after_the_queue_wait.jsonl",
    ),
    Rule(
        "pcbusy_only_while_busy",
        "A [PCBUSY_CLEAN_QUEUE] answer is written only while isOSPageCacheBusy() holds.",
        "spec.invariants.pcbusy_answers_only_while_busy; BrokerFastFailure.cleanExpiredRequest phase 1",
        Observation.FULL,
        "scan",
        "conformant-5.3.3.jsonl",
        "broken-pcbusy_only_while_busy.jsonl",
    ),
    Rule(
        "rejectrequest_only_while_busy_or_deficient",
        "A [REJECTREQUEST] answer is written only while the store is busy or the TransientStorePool has no buffer.",
        "spec.invariants.reject_request_answers_only_while_busy_or_deficient; SendMessageProcessor.rejectRequest",
        Observation.FULL,
        "scan",
        "conformant-pool-exhaustion.jsonl",
        "broken-rejectrequest_only_while_busy_or_deficient.jsonl",
    ),
    Rule(
        "no_queue_over_capacity",
        "No executor queue ever holds more tasks than its configured capacity.",
        "spec.invariants.no_queue_exceeds_its_capacity; LinkedBlockingQueue(capacity)",
        Observation.QUEUES,
        "scan",
        "conformant-full-send-queue.jsonl",
        "broken-no_queue_over_capacity.jsonl",
    ),
    Rule(
        "fifo_service_per_queue",
        "Each executor queue hands out (to workers and to fast failure) its tasks in the order they were queued.",
        "LinkedBlockingQueue FIFO; BrokerFastFailure polls the head (semantics.md 1.3, 4.4)",
        Observation.QUEUES,
        "scan",
        "conformant-5.3.3.jsonl",
        "broken-fifo_service_per_queue.jsonl",
    ),
    Rule(
        "lock_held_by_one_writer_at_a_time",
        "The commit-log put lock is taken only when free and released only by its holder.",
        "spec.invariants.at_most_one_writer_holds_the_put_lock; PutMessageSpinLock / PutMessageReentrantLock",
        Observation.FULL,
        "scan",
        "conformant-5.3.3.jsonl",
        "broken-lock_held_by_one_writer_at_a_time.jsonl",
    ),
    Rule(
        "begin_time_zero_when_lock_free",
        "When the put lock is released, beginTimeInLock is back to 0 (broken by an exception inside the lock in 4.0.0–4.9.2 and 5.x).",
        "spec.invariants.begin_time_is_zero_when_lock_is_free; CommitLog, ISSUE #3459",
        Observation.FULL,
        "scan",
        "conformant-4.9.8.jsonl",
        "broken-begin_time_zero_when_lock_free.jsonl",
    ),
    Rule(
        "buffers_conserved_and_returned_only_at_full_commit",
        "Pool buffers are each either available or lent to one file, and a buffer comes back only when its file is committed to the full file size.",
        "spec.invariants.lent_and_available_buffers_partition_the_pool; MappedFile.commit",
        Observation.FULL,
        "scan",
        "conformant-pool-exhaustion.jsonl",
        "broken-buffers_conserved_and_returned_only_at_full_commit.jsonl",
    ),
    Rule(
        "fast_failure_runs_10ms_apart_while_enabled",
        "The k-th fast-failure run starts no earlier than start + initial delay + k × period (header values), and does work only while brokerFastFailureEnable is on.",
        "BrokerFastFailure.start scheduleAtFixedRate(1000, 10 ms) (semantics.md 4.1)",
        Observation.QUEUES,
        "scan",
        "conformant-5.3.3.jsonl",
        "broken-fast_failure_runs_10ms_apart_while_enabled.jsonl",
    ),
    Rule(
        "limiter_decisions_as_the_bucket_says",
        "Each rate-limit decision (admit or throttle) is what the topic's token bucket with its circuit breaker decides at that time.",
        "source 004 RateLimitHandler / TokenBucketRateLimiter; spec.limiter",
        Observation.QUEUES,
        "scan",
        "conformant-retry-storm-limited.jsonl",
        "broken-limiter_decisions_as_the_bucket_says.jsonl",
    ),
)
RULES_BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}
SCAN_RULES = tuple(r.name for r in RULES if r.body == "scan")


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

#: Columns the scan reads (besides the header row).
SCAN_COLUMNS = ("seq", "ts", "kind", "io_thread", "code", "topic", "oneway", "executor", "worker", "queue",
                "enabled", "wait_ms", "request_id", "responses")

_DEQUEUE_KINDS = {"WorkerTakesTask", "WorkerDiscardsCancelledTask", "WorkerRunsForeignTask"}


@dataclass
class _Request:
    opaque: int
    code: int
    topic: str
    created: int | None = None  # DispatchCreatesTask's ts (RequestTask.createTimestamp)


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
        self.lock: PutLock = FREE_LOCK
        self.files: tuple[MappedFile, ...] = ()
        pool = self.config.transient_store_pool_size if self.config.pool_enabled else 0
        self.available: tuple[int, ...] = tuple(range(pool))
        self.runs = 0
        self.ff_enabled = self.config.fast_failure_enable
        self.buckets: dict[str, tuple[int, Any]] = {}  # topic -> (created_at, TokenBucket)

    # helpers
    def _busy(self, now: int) -> bool:
        return is_os_page_cache_busy(self.lock, now, self.config.os_page_cache_busy_timeout_ms)

    def _executor_of(self, req: _Request) -> str | None:
        try:
            name = route(self.config, RequestCode(req.code))
        except ValueError:
            return None
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
        if kind == "RequestArrives":
            self.io[io] = _Request(row["request_id"], row["code"], row["topic"] or "")
        elif kind in ("RateLimitHandlerAdmits", "RateLimitHandlerThrottles"):
            self._limiter(seq, ts, kind, self.io.get(io))
            if kind == "RateLimitHandlerThrottles":
                self.io.pop(io, None)
        elif kind == "DispatchCreatesTask":
            req = self.io.get(io)
            if req is not None:
                req.created = ts
        elif kind == "DispatchQueuesTask":
            req = self.io.pop(io, None)
            name = self._executor_of(req) if req is not None else None
            if name is not None and req is not None:
                self.queues[name].append(req)
                cap = self.config.executor(ExecutorName(name)).capacity
                depth = len(self.queues[name])
                f["no_queue_over_capacity"].check(cap is None or depth <= cap, seq, lambda: f"{name} queue holds {depth} > capacity {cap}")
        elif kind == "DispatchStartsWorker":
            req = self.io.pop(io, None)
            if req is not None:
                name = self._executor_of(req)
                if name is not None:
                    index = self.workers_started.get(name, 0)
                    self.workers_started[name] = index + 1
                    self.on_worker[(name, index)] = req
        elif kind in ("DispatchAnswersNotSupported", "DispatchRejectsRequest", "DispatchRejectsOverload", "RateLimitHandlerThrottles"):
            self.io.pop(io, None)
        elif kind == "InternalTaskSubmitted":
            self.queues[row["executor"]].append(None)
        elif kind in _DEQUEUE_KINDS:
            head = self._dequeue(row["executor"], seq, None)
            self.on_worker[(row["executor"], row["worker"])] = head if kind == "WorkerTakesTask" else None
        elif kind == "FastFailureDrainsBusySendQueue":
            opaque = responses[0]["request_id"] if responses else None
            self._dequeue(ExecutorName.SEND.value, seq, opaque)
        elif kind == "FastFailureDropsForeignElement":
            self._dequeue(ExecutorName.SEND.value, seq, None)
        elif kind == "FastFailureCleansExpiredHead":
            opaque = responses[0]["request_id"] if responses else None
            head = self._dequeue(row["queue"], seq, opaque)
            if head is not None:
                self._timeout(seq, ts, row["queue"], head, responses)
        elif kind in ("FastFailureStartsRun", "FastFailureSkipsRun"):
            c = self.config
            earliest = c.start_time_ms + c.fast_failure_initial_delay_ms + self.runs * c.fast_failure_period_ms
            k = self.runs
            on = self.ff_enabled or not c.profile.fast_failure_switch
            f["fast_failure_runs_10ms_apart_while_enabled"].check(
                ts >= earliest and on == (kind == "FastFailureStartsRun"),
                seq,
                lambda: f"run {k} ({kind}) at ts {ts}: due no earlier than {earliest}, switch {'on' if on else 'off'}",
            )
            self.runs += 1
        elif kind == "OperatorSetsFastFailureEnable":
            self.ff_enabled = row["enabled"]
        elif kind == "OperatorSetsQueueWait":
            self.waits[row["queue"]] = row["wait_ms"]
        if kind in ("WorkerProcessesRequest", "WorkerFindsPageCacheBusy", "WorkerAppendsAndUnlocks", "WorkerThrowsInsideLock"):
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
                deficient = is_transient_store_pool_deficient(self.available, self.config.pool_enabled)
                f["rejectrequest_only_while_busy_or_deficient"].check(
                    busy or deficient, seq, lambda: f"[REJECTREQUEST] at ts {ts}: not busy (beginTimeInLock {self.lock.begin_time_in_lock}) and {len(self.available)} buffers available"
                )

    def _timeout(self, seq: int, ts: int, queue: str, head: _Request, responses: Sequence[Mapping[str, Any]]) -> None:
        finding = self.findings["timeout_only_after_the_queue_wait"]
        for r in responses:
            parsed = parse_clean_queue_remark(r["remark"] or "")
            if parsed is None or head.created is None:
                finding.check(False, seq, lambda: f"[TIMEOUT_CLEAN_QUEUE] answer for a task with no creation time or an unparsable remark {r['remark']!r}")
                continue
            _, period, size = parsed
            waited, wait, depth = ts - head.created, self.waits[queue], len(self.queues[queue])
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
        if kind in ("WorkerAcquiresPutLock", "HaServiceAcquiresPutLock"):
            one.check(self.lock.holder is None, seq, lambda: f"{kind} while {self.lock.holder} holds the lock")
            self.lock = acquire_for_put(self.lock, holder, ts) if holder is not None else acquire_for_ha(self.lock)
        elif kind in ("WorkerAppendsAndUnlocks", "WorkerThrowsInsideLock", "HaServiceReleasesPutLock"):
            who = holder if holder is not None else HA_SERVICE
            one.check(self.lock.holder == who, seq, lambda: f"{kind} by {who} while the holder is {self.lock.holder}")
            if kind == "WorkerAppendsAndUnlocks":
                self.lock = release_after_put(self.lock)
                self._append(seq)
            elif kind == "WorkerThrowsInsideLock":
                self.lock = throw_inside_lock(self.lock, self.config.profile.begin_time_reset_in_finally)
            else:
                self.lock = release_for_ha(self.lock)
            if kind != "HaServiceReleasesPutLock":
                f["begin_time_zero_when_lock_free"].check(
                    self.lock.begin_time_in_lock == 0, seq, lambda: f"{kind} left beginTimeInLock = {self.lock.begin_time_in_lock} with the lock free"
                )
        pool = f["buffers_conserved_and_returned_only_at_full_commit"]
        size = self.config.mapped_file_size
        if kind == "WorkerCreatesMappedFile":
            self.files, self.available = create_mapped_file(self.files, self.available, self.config.pool_enabled, size)
        elif kind == "CommitServiceCommits":
            at = file_to_commit(self.files, size)
            pool.check(at is not None, seq, lambda: "a commit with nothing to commit")
            if at is not None:
                self.files = commit_file(self.files, at)
        elif kind == "CommitServiceReturnsBuffer":
            at = file_awaiting_return(self.files, size)
            pool.check(at is not None, seq, lambda: f"a buffer returned while no file is committed to its size {size}: {self.files}")
            if at is not None:
                self.files, self.available = return_committed_buffer(self.files, self.available, at)
        else:
            return
        total = self.config.transient_store_pool_size if self.config.pool_enabled else 0
        pool.check(buffers_partition_the_pool(self.available, self.files, total), seq, lambda: f"available {self.available}, files {self.files}")

    def _append(self, seq: int) -> None:
        if self.files and self.files[-1].wrote < self.config.mapped_file_size:
            self.files = append_message(self.files, self.config.mapped_file_size)

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
            admitted == (kind == "RateLimitHandlerAdmits"),
            seq,
            lambda: f"topic {req.topic!r} at ts {ts}: the bucket {'admits' if admitted else 'throttles'}, the trace {kind}",
        )


def scan_trace(header: TraceHeader, rows: Iterable[Mapping[str, Any]]) -> dict[str, Finding]:
    """Run every scan rule over one trace's events (in seq order)."""
    scanner = TraceScanner(header)
    for row in rows:
        scanner.event(row["seq"], row["ts"], row["kind"], row)
    return scanner.findings


# -- Frame rules (Spark) ------------------------------------------------------------------------


def silent_codes(config: BrokerConfig) -> list[int]:
    """Request codes a non-oneway request may get no answer for: unknown codes on 4.0.0–4.9.0's admin processor."""
    profile = config.profile
    if profile.admin_answers_unknown_code or not config.default_processor_registered:
        return []
    return [
        int(c)
        for c in RequestCode
        if not profile.has_processor_for(c) and c is not RequestCode.GET_BROKER_RUNTIME_INFO and route(config, c) is not None
    ]


def header_facts(header: TraceHeader) -> dict[str, Any]:
    """The per-trace values the frame rules join on."""
    config = header.config
    pc_code, _ = busy_answer(config.profile, RequestCode.SEND_MESSAGE)
    sendback_code, sendback_remark = busy_answer(config.profile, RequestCode.CONSUMER_SEND_MSG_BACK)
    return {
        "trace_id": header.trace_id,
        "observation": header.observation.value,
        "level": LEVEL_ORDER[header.observation],
        "silent_codes": silent_codes(config),
        "pc_code": int(pc_code),
        "sendback_code": int(sendback_code),
        "sendback_remark": sendback_remark,
    }


def expected_answer_ok(code: int, remark: str | None, facts: Mapping[str, Any]) -> bool:
    """Plain-Python twin of the Spark predicate in :func:`frame_rules` (used by tests and the report)."""
    busy = int(ResponseCode.SYSTEM_BUSY)
    if remark in (REJECT_REQUEST_REMARK, OVERLOAD_REMARK):
        return code == busy
    if remark == PC_SYNCHRONIZED_REMARK:
        return bool(code == facts["pc_code"])
    if remark is not None and (parse_clean_queue_remark(remark) or parse_rate_limit_remark(remark)):
        return code == busy
    if remark is not None and remark.startswith(" request type "):
        return code == int(ResponseCode.REQUEST_CODE_NOT_SUPPORTED)
    if remark is not None and remark == facts["sendback_remark"]:
        return bool(code == facts["sendback_code"])
    return code in (int(ResponseCode.SUCCESS), int(ResponseCode.SYSTEM_ERROR), int(ResponseCode.REQUEST_CODE_NOT_SUPPORTED))

