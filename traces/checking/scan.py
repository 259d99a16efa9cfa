"""The scan rules, judged over one trace's Arrow columns with array operations.

A scan rule follows a trace's state in ``seq`` order (which request each remoting thread is
dispatching, each executor queue, each worker's task, the put lock, the pool's buffers, the
fast-failure schedule, the limiter's buckets). Here that state is rebuilt per event kind with
numpy instead of a Python loop per event:

- *the request an event refers to*: a remoting thread's current request is the one of its latest
  ``remoting.RequestArrives``, unless a dispatch step that finishes with the request (queues it, starts a
  worker with it, rejects it, answers "not supported", throttles it) came after it;
- *queue depth*: a running sum of +1 (queued) and −1 (left the queue), reflected at 0 because
  leaving an empty queue is a broken trace that takes nothing; the k-th element that leaves a
  queue is the k-th that entered it (FIFO is what the rule checks against what workers and fast
  failure say they took);
- *a worker's task*: the latest event of that worker that gave it a task or ended its task;
- *the put lock*: the holder before a lock event is the holder named by the previous lock event
  if that one took the lock; ``beginTimeInLock`` is forward-filled from the events that set it;
- *the fast-failure schedule*: the k-th run against start + delay + k × period, the switch
  forward-filled from the operator's events.

Only two states need a sequential walk, and it runs over just the events that touch them (numpy
masks select them first): the pool's mapped files (``spec.storepool``; a run of appends is
walked only until the file is full) and each topic's token bucket (``spec.limiter``; while the
breaker stays open the bucket cannot change, so the decisions until it may close are counted
without a call). The answers whose remark must be parsed or compared with the lock's and the
pool's state ([TIMEOUT_CLEAN_QUEUE], [PCBUSY_CLEAN_QUEUE], [REJECTREQUEST]) are judged over
arrays, each distinct remark parsed once. Meaning comes from the spec's pure helpers
(``spec.remoting.route``, ``spec.putlock``, ``spec.storepool``, ``spec.limiter``, ``spec.codes``;
two one-line predicates, ``is_os_page_cache_busy`` and ``is_transient_store_pool_deficient``, are
restated over arrays, and ``tests/test_traces_scan.py`` holds them to the per-event oracle that
calls the spec), never the spec's ``step``.

The columns come from Arrow once for all the traces a task judges (:class:`Events`), then each
trace is a slice of them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from spec import commitservice, environment, fastfailure, remoting, workers
from spec.codes import REJECT_REQUEST_REMARK, RequestCode, parse_clean_queue_remark
from spec.config import BUSY_UPPER_BOUND_MS, BrokerConfig
from spec.limiter import circuit_breaker_acquire, create_bucket
from spec.profiles import ExecutorName
from spec.putlock import HA_SERVICE, Holder
from spec.remoting import route
from spec.state import MappedFile
from spec.storepool import (
    append_message,
    commit_file,
    create_mapped_file,
    file_awaiting_return,
    file_to_commit,
    return_committed_buffer,
)
from traces.format.records import KINDS, RESPONSE_KIND, TraceHeader, vocabulary
from traces.checking.rules import LEVEL_ORDER, RULES, SAMPLE, answer_goes_to, expected_answer_ok, header_facts

Ints = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

#: Columns the scan reads.
SCAN_COLUMNS = ("seq", "ts", "kind", "io_thread", "code", "topic", "oneway", "executor", "worker", "queue", "enabled", "wait_ms",
                "request_id", "responses")

#: Dispatch steps after which the remoting thread no longer holds its request.
_IO_ENDS = (remoting.RateLimitHandlerThrottles.__name__, remoting.DispatchQueuesTask.__name__, remoting.DispatchStartsWorker.__name__, remoting.DispatchAnswersNotSupported.__name__,
            remoting.DispatchRejectsRequest.__name__, remoting.DispatchRejectsOverload.__name__)
#: Steps that read the remoting thread's current request.
_IO_READS = (remoting.RateLimitHandlerAdmits.__name__, remoting.RateLimitHandlerThrottles.__name__, remoting.DispatchCreatesTask.__name__, remoting.DispatchQueuesTask.__name__,
             remoting.DispatchStartsWorker.__name__)
_DEQUEUE_KINDS = (workers.WorkerTakesTask.__name__, workers.WorkerDiscardsCancelledTask.__name__, workers.WorkerRunsForeignTask.__name__)
#: Steps in which a worker answers the task it took (and so ends it).
_WORKER_ANSWERS = (workers.WorkerProcessesRequest.__name__, workers.WorkerFindsPageCacheBusy.__name__, workers.WorkerAppendsAndUnlocks.__name__, workers.WorkerThrowsInsideLock.__name__)
_LOCK_ACQUIRES = (workers.WorkerAcquiresPutLock.__name__, environment.HaServiceAcquiresPutLock.__name__)
_LOCK_RELEASES = (workers.WorkerAppendsAndUnlocks.__name__, workers.WorkerThrowsInsideLock.__name__, environment.HaServiceReleasesPutLock.__name__)
_POOL_KINDS = (workers.WorkerCreatesMappedFile.__name__, commitservice.CommitServiceCommits.__name__, commitservice.CommitServiceReturnsBuffer.__name__)
_NONE = -1  # "no request / no element / no holder" in index and key arrays
_WORKER_SPAN = 1 << 32  # key of a worker thread = executor id × span + worker index


@dataclass
class Finding:
    """One rule on one trace: how many things it checked, how many broke, a sample of the breaks."""

    checked: int = 0
    violations: int = 0
    sample: list[tuple[int, str]] = field(default_factory=list)  # (seq, detail), the earliest breaks

    def add(self, ok: Mask, seqs: Ints, detail: Callable[[int], str]) -> None:
        """Count checked items ``ok`` (at events ``seqs``); ``detail(i)`` describes broken item ``i``."""
        self.checked += len(ok)
        bad = np.flatnonzero(~ok)
        self.violations += len(bad)
        self.sample = sorted(self.sample + [(int(seqs[i]), detail(int(i))) for i in bad[:SAMPLE]])[:SAMPLE]

    def one(self, ok: bool, seq: int, detail: Callable[[], str]) -> None:
        """Count one checked item (from a sequential walk, in seq order: the first breaks are the sample)."""
        self.checked += 1
        if not ok:
            self.violations += 1
            if len(self.sample) < SAMPLE:
                self.sample.append((seq, detail()))


def _latest_before(group: Ints, mark: Mask) -> Ints:
    """For each position i, the largest j < i with ``group[j] == group[i]`` and ``mark[j]``; -1 if none."""
    n = len(group)
    if n == 0:
        return np.empty(0, np.int64)
    order = np.argsort(group, kind="stable")
    g = group[order]
    pos = np.arange(n)
    latest = np.maximum.accumulate(np.where(mark[order], pos, -1))
    prev = np.concatenate(([-1], latest[:-1]))
    first = np.maximum.accumulate(np.where(np.concatenate(([True], g[1:] != g[:-1])), pos, 0))
    out = np.empty(n, np.int64)
    out[order] = np.where(prev >= first, order[np.maximum(prev, 0)], -1)
    return out


def _at_or_before(at: Ints, n: int) -> Ints:
    """For each position 0..n-1, how many of the distinct sorted positions ``at`` are at or before
    it: ``np.searchsorted(at, np.arange(n), side="right")`` in linear time."""
    marks = np.zeros(n, np.int64)
    marks[at] = 1
    return np.cumsum(marks)


def _ints(column: pa.ChunkedArray | pa.Array) -> Ints:
    return np.asarray(pc.fill_null(column, _NONE).to_numpy(), dtype=np.int64)


def _valid(column: pa.ChunkedArray | pa.Array) -> Mask:
    return np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _codes(column: pa.ChunkedArray | pa.Array, names: Sequence[str]) -> Ints:
    """Strings as indices into ``names``; ``len(names)`` for any other string, -1 for null."""
    index, values = vocabulary(column)
    known = {name: i for i, name in enumerate(names)}
    return np.array([known.get(v, len(names)) if v is not None else _NONE for v in values], np.int64)[index]


#: Every event kind, in a fixed order: an event's kind is its index here.
KIND_NAMES: tuple[str, ...] = (*sorted(KINDS), RESPONSE_KIND)
#: Every executor name, in a fixed order: an event's executor or queue is its index here.
EXECUTOR_NAMES: tuple[str, ...] = tuple(e.value for e in ExecutorName)


@dataclass(frozen=True)
class Remarks:
    """The distinct response remarks of a set of events (the last is None: no remark), each
    classified once for all the traces that share them."""

    texts: list[str | None]
    pcbusy: Mask  # a [PCBUSY_CLEAN_QUEUE] remark
    reject: Mask  # the [REJECTREQUEST] remark
    _parsed: dict[int, tuple[str, int, int] | None] = field(default_factory=dict)

    @staticmethod
    def of(texts: list[str | None]) -> Remarks:
        # Most remarks are [TIMEOUT_CLEAN_QUEUE] ones, each distinct (period, size): parse only
        # the ones that can be [PCBUSY_CLEAN_QUEUE] here, the others when a rule asks.
        pcbusy = np.zeros(len(texts), bool)
        for i, t in enumerate(texts):
            if t is not None and t.startswith("[PCBUSY_CLEAN_QUEUE]"):
                parsed = parse_clean_queue_remark(t)
                pcbusy[i] = parsed is not None and parsed[0] == "PCBUSY_CLEAN_QUEUE"
        return Remarks(texts, pcbusy, np.array([t == REJECT_REQUEST_REMARK for t in texts], bool))

    def clean_queue(self, i: int) -> tuple[str, int, int] | None:
        """spec.codes.parse_clean_queue_remark of remark ``i`` (parsed once)."""
        if i not in self._parsed:
            self._parsed[i] = parse_clean_queue_remark(self.texts[i] or "")
        return self._parsed[i]


@dataclass(frozen=True)
class Events:
    """The columns the scan reads, as numpy arrays, for the events of one or more traces.

    Converted from Arrow once for all the traces of a task (:meth:`of`), then cut per trace
    (:meth:`slice`, views only): pyarrow.compute calls cost ~0.1 ms each whatever the length, which
    made the conversion per trace a third of the scan. Nulls are -1 in the integer columns (with a
    separate mask where the rules tell null from a value), strings are indices into fixed names
    (``KIND_NAMES``, ``EXECUTOR_NAMES``) or into the distinct values (topics, remarks).
    """

    seq: Ints
    ts: Ints
    kind: Ints  # index into KIND_NAMES
    io_thread: Ints
    code: Ints
    has_code: Mask
    topic: Ints  # index into topics
    oneway: Ints  # -1 null, 0 false, 1 true
    executor: Ints  # index into EXECUTOR_NAMES; len(EXECUTOR_NAMES) another name; -1 null
    worker: Ints
    queue: Ints  # as executor
    enabled: Ints  # as oneway
    wait_ms: Ints
    request_id: Ints
    has_request_id: Mask
    response_start: Ints  # event i's responses are [response_start[i], response_start[i + 1])
    response_opaque: Ints
    response_has_opaque: Mask
    response_code: Ints
    response_remark: Ints  # index into remarks.texts
    topics: list[str | None]
    remarks: Remarks

    @staticmethod
    def of(table: pa.Table) -> Events:
        """Convert the ``SCAN_COLUMNS`` of ``table`` (events in seq order per trace, no header)."""
        responses = table.column("responses")
        lengths = _ints(pc.list_value_length(responses))
        flat = pc.list_flatten(responses)
        opaque = pc.struct_field(flat, "request_id")
        remark, remarks = vocabulary(pc.struct_field(flat, "remark"))
        topic, topics = vocabulary(table.column("topic"))
        return Events(
            seq=_ints(table.column("seq")),
            ts=_ints(table.column("ts")),
            kind=_codes(table.column("kind"), KIND_NAMES),
            io_thread=_ints(table.column("io_thread")),
            code=_ints(table.column("code")),
            has_code=_valid(table.column("code")),
            topic=np.where(topic == len(topics) - 1, _NONE, topic),
            oneway=_ints(pc.cast(table.column("oneway"), pa.int64())),
            executor=_codes(table.column("executor"), EXECUTOR_NAMES),
            worker=_ints(table.column("worker")),
            queue=_codes(table.column("queue"), EXECUTOR_NAMES),
            enabled=_ints(pc.cast(table.column("enabled"), pa.int64())),
            wait_ms=_ints(table.column("wait_ms")),
            request_id=_ints(table.column("request_id")),
            has_request_id=_valid(table.column("request_id")),
            response_start=np.concatenate(([0], np.cumsum(np.maximum(lengths, 0)))),
            response_opaque=_ints(opaque),
            response_has_opaque=_valid(opaque),
            response_code=_ints(pc.struct_field(flat, "code")),
            response_remark=remark,
            topics=topics,
            remarks=Remarks.of(remarks),
        )

    def __len__(self) -> int:
        return len(self.seq)

    def slice(self, start: int, end: int) -> Events:
        """Events ``start`` to ``end`` (one trace's), sharing the arrays and vocabularies."""
        first, last = int(self.response_start[start]), int(self.response_start[end])
        per_event = {f: getattr(self, f)[start:end] for f in _PER_EVENT}
        per_response = {f: getattr(self, f)[first:last] for f in _PER_RESPONSE}
        return Events(
            **per_event, **per_response, response_start=self.response_start[start : end + 1] - first, topics=self.topics, remarks=self.remarks
        )


_PER_EVENT = ("seq", "ts", "kind", "io_thread", "code", "has_code", "topic", "oneway", "executor", "worker", "queue", "enabled",
              "wait_ms", "request_id", "has_request_id")
_PER_RESPONSE = ("response_opaque", "response_has_opaque", "response_code", "response_remark")


@lru_cache(maxsize=None)
def _kind_mask(kinds: tuple[str, ...]) -> Mask:
    return np.array([k in kinds for k in KIND_NAMES] + [False], bool)


class TraceScan:
    """Every scan rule over one trace (its events in ``seq`` order, no header).

    Also keeps, per event, the state the report draws: each queue's depth, ``beginTimeInLock``
    and the pool's free buffers after the event.
    """

    def __init__(self, header: TraceHeader, events: Events) -> None:
        self.config: BrokerConfig = header.config
        self.level = LEVEL_ORDER[header.observation]
        self.findings = {rule.name: Finding() for rule in RULES}
        self.n = n = len(events)
        self.events = events
        self.seq = events.seq
        self.ts = events.ts
        self.kind = events.kind
        self.queue_names = [e.name.value for e in self.config.executors]
        self.executor = self._executor_ids(events.executor)
        self.queue = self._executor_ids(events.queue)
        self.worker = events.worker
        self.request_id = events.request_id
        self.code = events.code
        self.response_count = np.diff(events.response_start)
        self.response_event = np.repeat(np.arange(n), self.response_count)  # event of each response
        self.response_opaque = events.response_opaque
        self.response_has_opaque = events.response_has_opaque
        self.remarks = events.remarks.texts  # distinct remarks; the last is "none"
        self.response_remark_index = events.response_remark
        self.response_code = events.response_code
        first = events.response_start[:-1]  # index of each event's first response
        answered = self.response_count > 0
        self.first_has_opaque = np.zeros(n, bool)  # the event's first response names an opaque
        self.first_has_opaque[answered] = self.response_has_opaque[first[answered]]
        self.first_opaque = np.full(n, _NONE, np.int64)
        self.first_opaque[self.first_has_opaque] = self.response_opaque[first[self.first_has_opaque]]

        self._requests()
        self.depth = {q: np.zeros(n, np.int64) for q in self.queue_names}  # queue depth after each event
        self.head = np.full(n, _NONE, np.int64)  # the request (its arrival's index) an element-leaving event took
        self._queues()
        self._workers()
        self._timeouts()
        self._fast_failure()
        pool = self.config.transient_store_pool_size if self.config.pool_enabled else 0
        self.begin = np.zeros(n, np.int64)  # beginTimeInLock after each event
        self.free = np.full(n, pool, np.int64)  # pool buffers available after each event
        if self.level >= 2:
            self._lock()
            self._pool()
        self._busy_answers()
        self._limiter()
        self._answers(header)

    # -- columns --------------------------------------------------------------------------------

    def _is(self, *kinds: str) -> Mask:
        return _kind_mask(kinds)[self.kind]

    def kind_of(self, i: int) -> str:
        return KIND_NAMES[int(self.kind[i])]

    def _executor_ids(self, names: Ints) -> Ints:
        """Executor names (indices into ``EXECUTOR_NAMES``) as indices into ``queue_names``; -1 null, -2 a name the config lacks."""
        ids = np.array([self.queue_names.index(v) if v in self.queue_names else -2 for v in EXECUTOR_NAMES] + [-2, _NONE], np.int64)
        return ids[names]

    @staticmethod
    def _executor_name(code: int) -> str | None:
        return EXECUTOR_NAMES[code] if 0 <= code < len(EXECUTOR_NAMES) else None

    def _queue_id(self, name: ExecutorName) -> int:
        return self.queue_names.index(name.value) if name.value in self.queue_names else -2

    # -- which request each dispatch step refers to ----------------------------------------------------

    def _requests(self) -> None:
        """``self.request[i]``: the arrival (its index) a dispatch step of thread ``io_thread`` works on."""
        n = self.n
        arrives = self._is(remoting.RequestArrives.__name__)
        at = np.flatnonzero(arrives | self._is(*_IO_ENDS) | self._is(*_IO_READS))
        latest = _latest_before(self.events.io_thread[at], (arrives | self._is(*_IO_ENDS))[at])
        self.request = np.full(n, _NONE, np.int64)
        holds = latest >= 0
        holds[holds] = arrives[at[latest[holds]]]
        self.request[at[holds]] = at[latest[holds]]
        self.request[~self._is(*_IO_READS)] = _NONE
        # The executor each request is routed to (spec.remoting.route), by distinct request code.
        codes, inverse = np.unique(self.code, return_inverse=True)
        routed = np.array([self._route(int(c)) for c in codes], np.int64)
        self.routed = routed[inverse]  # meaningful at arrivals
        # RequestTask.createTimestamp: the ts of the latest remoting.DispatchCreatesTask for the request.
        self.created = np.full(n, _NONE, np.int64)
        creates = np.flatnonzero(self._is(remoting.DispatchCreatesTask.__name__) & (self.request >= 0))[::-1]
        req, last = np.unique(self.request[creates], return_index=True)
        self.created[req] = self.ts[creates[last]]

    def _route(self, code: int) -> int:
        name = route(self.config, code)
        return _NONE if name is None else self._queue_id(name)

    # -- queues ----------------------------------------------------------------------------------

    def _queues(self) -> None:
        """Depth of each queue and what each leaving event took; capacity and FIFO (queue side)."""
        n = self.n
        queued = self._is(remoting.DispatchQueuesTask.__name__) & (self.request >= 0)
        target = np.full(n, _NONE, np.int64)
        target[queued] = self.routed[self.request[queued]]
        target[self._is(environment.InternalTaskSubmitted.__name__)] = self.executor[self._is(environment.InternalTaskSubmitted.__name__)]
        element = np.where(self._is(remoting.DispatchQueuesTask.__name__), self.request, _NONE)  # internal tasks are no request
        dequeue = self._is(*_DEQUEUE_KINDS)
        send = self._is(fastfailure.FastFailureDrainsBusySendQueue.__name__, fastfailure.FastFailureDropsForeignElement.__name__)
        cleans = self._is(fastfailure.FastFailureCleansExpiredHead.__name__)
        leaving = dequeue | send | cleans
        # The queue each element-leaving event takes from (read only at those; -1 or -2 is no queue of the config's).
        source = np.where(send, self._queue_id(ExecutorName.SEND), np.where(cleans, self.queue, self.executor))
        # An element-leaving event found its queue empty (or took from no queue of the config's).
        self.left_nothing = leaving & ~np.isin(source, np.arange(len(self.queue_names)))
        capacity = self.findings["no_queue_over_capacity"]
        for q, name in enumerate(self.queue_names):
            ins, outs = target == q, leaving & (source == q)
            at = np.flatnonzero(ins | outs)
            if len(at) == 0:
                continue
            step = np.where(ins[at], 1, -1)
            total = np.cumsum(step)
            depth = total - np.minimum(np.minimum.accumulate(total), 0)  # leaving an empty queue takes nothing
            before = np.concatenate(([0], depth[:-1]))
            empty = outs[at] & (before == 0)
            self.left_nothing[at[empty]] = True
            took = at[outs[at] & ~empty]
            self.head[took] = element[at[ins[at]]][: len(took)]  # the k-th to leave is the k-th that came in
            self.depth[name] = depth[np.maximum(_at_or_before(at, n) - 1, 0)]
            self.depth[name][: at[0]] = 0
            cap = self.config.executor(ExecutorName(name)).capacity
            pushed = at[queued[at] & ins[at]]
            size = self.depth[name][pushed]
            capacity.add(size <= cap if cap is not None else np.ones(len(pushed), bool), self.seq[pushed],  # detail runs now
                         lambda i: f"{name} queue holds {size[i]} > capacity {cap}")
        fifo = self.findings["fifo_service_per_queue"]
        empty = np.flatnonzero(self.left_nothing)
        fifo.add(np.zeros(len(empty), bool), self.seq[empty],
                 lambda i: f"{self._queue_name(int(empty[i]))} queue is empty, yet an element left it")
        named = np.flatnonzero((send & self._is(fastfailure.FastFailureDrainsBusySendQueue.__name__) | cleans) & ~self.left_nothing & self.first_has_opaque)
        got = np.where(self.head[named] >= 0, self.request_id[np.maximum(self.head[named], 0)], _NONE)
        expected = self.first_opaque[named]
        fifo.add((self.head[named] >= 0) & (got == expected), self.seq[named],
                 lambda i: f"{self._queue_name(int(named[i]))} queue head is opaque {None if got[i] == _NONE else got[i]}, "
                           f"the answer went to opaque {expected[i]}")

    def _queue_name(self, i: int) -> str:
        kind = self.kind_of(i)
        if kind in (fastfailure.FastFailureDrainsBusySendQueue.__name__, fastfailure.FastFailureDropsForeignElement.__name__):
            return ExecutorName.SEND.value
        column = self.events.queue if kind == fastfailure.FastFailureCleansExpiredHead.__name__ else self.events.executor
        return str(self._executor_name(int(column[i])))

    # -- workers ---------------------------------------------------------------------------------

    def _workers(self) -> None:
        """FIFO (worker side): a worker answers the request it took, or was started with."""
        n = self.n
        key = np.full(n, _NONE, np.int64)
        task = np.full(n, _NONE, np.int64)  # the request a worker holds after the event
        takes = self._is(*_DEQUEUE_KINDS)
        key[takes] = self.executor[takes] * _WORKER_SPAN + self.worker[takes]
        task[self._is(workers.WorkerTakesTask.__name__)] = self.head[self._is(workers.WorkerTakesTask.__name__)]
        # remoting.DispatchStartsWorker: the new thread (numbered per executor in start order) runs the request.
        starts = np.flatnonzero(self._is(remoting.DispatchStartsWorker.__name__) & (self.request >= 0))
        starts = starts[self.routed[self.request[starts]] >= 0]
        executor = self.routed[self.request[starts]]
        for q in np.unique(executor):
            mine = starts[executor == q]
            key[mine] = q * _WORKER_SPAN + np.arange(len(mine))
            task[mine] = self.request[mine]
        answers = self._is(*_WORKER_ANSWERS)
        key[answers] = self.executor[answers] * _WORKER_SPAN + self.worker[answers]
        started = np.zeros(n, bool)
        started[starts] = True
        at = np.flatnonzero(takes | answers | started)
        latest = _latest_before(key[at], np.ones(len(at), bool))
        held = np.full(n, _NONE, np.int64)
        held[at] = np.where(latest >= 0, task[at[np.maximum(latest, 0)]], _NONE)
        held[~answers] = _NONE
        r = np.flatnonzero(answers[self.response_event])
        event = self.response_event[r]
        got = held[event]
        opaque = np.where(got >= 0, self.request_id[np.maximum(got, 0)], _NONE)
        ok = (got < 0) | (self.response_has_opaque[r] & (self.response_opaque[r] == opaque))
        self.findings["fifo_service_per_queue"].add(
            ok, self.seq[event],
            lambda i: f"worker {self._worker_name(int(event[i]))} took opaque {opaque[i]} but answered opaque {self.response_opaque[r[i]]}")

    def _worker_name(self, i: int) -> tuple[str, int]:
        return (str(self._executor_name(int(self.events.executor[i]))), int(self.worker[i]))

    # -- fast failure ------------------------------------------------------------------------------

    def _timeouts(self) -> None:
        """[TIMEOUT_CLEAN_QUEUE] answers against the answered task's wait, the queue's wait and the size left."""
        cleaned = np.flatnonzero(self._is(fastfailure.FastFailureCleansExpiredHead.__name__) & (self.head >= 0))
        r = np.flatnonzero(np.isin(self.response_event, cleaned))
        if len(r) == 0:
            return
        event = self.response_event[r]
        remark = self.response_remark_index[r]
        distinct, inverse = np.unique(remark, return_inverse=True)  # remark is 1-D: so is inverse
        parsed = [self.events.remarks.clean_queue(int(k)) for k in distinct]  # each distinct remark once
        known = np.array([p is not None for p in parsed], bool)[inverse]
        period = np.array([p[1] if p else 0 for p in parsed], np.int64)[inverse]
        size = np.array([p[2] if p else 0 for p in parsed], np.int64)[inverse]
        # The task the answer went to (by its opaque), which is the head unless the cleaner took another.
        answered = self._request_of(self.response_opaque[r], self.response_has_opaque[r])
        created = np.where(answered >= 0, self.created[np.maximum(answered, 0)], _NONE)
        known &= created != _NONE
        waited = self.ts[event] - created
        # The queue's wait: the latest environment.OperatorSetsQueueWait for that queue before the event, else the
        # config's. A queue the release's fast failure does not clean has none (config.queue_waits lists the cleaned).
        queue = self.events.queue[event]
        waits = {EXECUTOR_NAMES.index(q.value): w for q, w in self.config.queue_waits}
        cleans = np.isin(queue, np.array(list(waits), np.int64))
        wait, depth = np.zeros(len(event), np.int64), np.zeros(len(event), np.int64)
        sets = np.flatnonzero(self._is(environment.OperatorSetsQueueWait.__name__))
        for q in np.unique(queue[known & cleans]).tolist():
            mine = known & (queue == q)
            own_sets = sets[self.events.queue[sets] == q]
            earlier = np.searchsorted(own_sets, event[mine], "left")  # sets before each event
            wait[mine] = np.concatenate(([waits[q]], self.events.wait_ms[own_sets]))[earlier]
            depth[mine] = self.depth[EXECUTOR_NAMES[q]][event[mine]]
        remarks = self.remarks

        def detail(i: int) -> str:
            if not cleans[i]:
                return (f"[TIMEOUT_CLEAN_QUEUE] answer from the {self._executor_name(int(queue[i]))} queue, which release "
                        f"{self.config.profile.version}'s fast failure does not clean")
            if not known[i]:
                return f"[TIMEOUT_CLEAN_QUEUE] answer for a task with no creation time or an unparsable remark {remarks[remark[i]]!r}"
            return (f"{self._executor_name(int(queue[i]))} task waited {waited[i]} ms (wait {wait[i]}), queue size after {depth[i]}; "
                    f"remark says period {period[i]}, size {size[i]}")

        self.findings["timeout_only_after_the_queue_wait"].add(
            known & cleans & (period == waited) & (waited >= wait) & (size == depth), self.seq[event], detail)

    def _request_of(self, opaques: Ints, has: Mask) -> Ints:
        """The request (its arrival's index; the first, for unvalidated events that reuse an opaque) of each opaque; _NONE for none."""
        arrivals = np.flatnonzero(self._is(remoting.RequestArrives.__name__))
        if len(arrivals) == 0:
            return np.full(len(opaques), _NONE, np.int64)
        order = np.argsort(self.request_id[arrivals], kind="stable")
        known = self.request_id[arrivals][order]
        at = np.minimum(np.searchsorted(known, opaques), len(known) - 1)
        return np.where(has & (known[at] == opaques), arrivals[order[at]], _NONE)

    def _fast_failure(self) -> None:
        """The k-th run is due at start + delay + k × period and works only while the switch is on."""
        c = self.config
        runs = np.flatnonzero(self._is(fastfailure.FastFailureStartsRun.__name__, fastfailure.FastFailureSkipsRun.__name__))
        sets = np.flatnonzero(self._is(environment.OperatorSetsFastFailureEnable.__name__))
        switch = np.concatenate(([c.fast_failure_enable], self.events.enabled[sets] == 1))
        on = switch[np.searchsorted(sets, runs)] | (not c.profile.fast_failure_switch)
        earliest = c.start_time_ms + c.fast_failure_initial_delay_ms + np.arange(len(runs)) * c.fast_failure_period_ms
        started = self._is(fastfailure.FastFailureStartsRun.__name__)[runs]
        self.findings["fast_failure_runs_10ms_apart_while_enabled"].add(
            (self.ts[runs] >= earliest) & (on == started),
            self.seq[runs],
            lambda k: f"run {k} ({self.kind_of(int(runs[k]))}) at ts {self.ts[runs[k]]}: due no earlier than {earliest[k]}, "
                      f"switch {'on' if on[k] else 'off'}",
        )

    # -- the put lock and the pool --------------------------------------------------------------------

    def _holder(self, key: int) -> Holder | None:
        if key == _NONE:
            return None
        if key == _NONE - 1:
            return HA_SERVICE
        return (self.queue_names[key // _WORKER_SPAN] if key >= 0 else "?", key % _WORKER_SPAN)

    def _lock(self) -> None:
        """One writer at a time, released by its holder; beginTimeInLock back to 0 when released."""
        acquires, releases = self._is(*_LOCK_ACQUIRES), self._is(*_LOCK_RELEASES)
        at = np.flatnonzero(acquires | releases)
        by_worker = self.worker[at] != _NONE
        who = np.where(by_worker, self.executor[at] * _WORKER_SPAN + self.worker[at], _NONE - 1)
        previous_acquire = np.concatenate(([False], acquires[at][:-1]))
        holder = np.where(previous_acquire, np.concatenate(([_NONE], who[:-1])), _NONE)  # before the event
        ok = np.where(acquires[at], holder == _NONE, holder == who)
        self.findings["lock_held_by_one_writer_at_a_time"].add(
            ok, self.seq[at],
            lambda i: (f"{self.kind_of(int(at[i]))} while {self._holder(int(holder[i]))} holds the lock" if acquires[at[i]]
                       else f"{self.kind_of(int(at[i]))} by {self._holder(int(who[i]))} while the holder is {self._holder(int(holder[i]))}"),
        )
        # spec.putlock: acquire_for_put stamps the clock; release_after_put clears; throw_inside_lock
        # clears only where the profile resets in finally; the HA service's acquire and release keep it.
        stamps = self._is(workers.WorkerAcquiresPutLock.__name__) & (self.worker != _NONE)
        clears = self._is(workers.WorkerAppendsAndUnlocks.__name__)
        if self.config.profile.begin_time_reset_in_finally:
            clears |= self._is(workers.WorkerThrowsInsideLock.__name__)
        sets = np.flatnonzero(stamps | clears)
        value = np.concatenate(([0], np.where(stamps[sets], self.ts[sets], 0)))
        self.begin = value[_at_or_before(sets, self.n)]
        freed = np.flatnonzero(self._is(workers.WorkerAppendsAndUnlocks.__name__, workers.WorkerThrowsInsideLock.__name__))
        self.findings["begin_time_zero_when_lock_free"].add(
            self.begin[freed] == 0, self.seq[freed],
            lambda i: f"{self.kind_of(int(freed[i]))} left beginTimeInLock = {self.begin[freed[i]]} with the lock free",
        )

    def _pool(self) -> None:
        """Walk the pool's own events (appends between them counted, not walked one by one).

        A commit must have something to commit and a buffer comes back only from a file committed to
        its full size. That the buffers partition the pool
        (spec.invariants.lent_and_available_buffers_partition_the_pool) needs no check here: the walk
        moves a buffer only through spec.storepool's create_mapped_file (borrow) and
        return_committed_buffer, which keep the partition."""
        c = self.config
        size, total = c.mapped_file_size, (c.transient_store_pool_size if c.pool_enabled else 0)
        finding = self.findings["buffers_conserved_and_returned_only_at_full_commit"]
        appends = np.flatnonzero(self._is(workers.WorkerAppendsAndUnlocks.__name__))
        events = np.flatnonzero(self._is(*_POOL_KINDS))
        appended_before = np.searchsorted(appends, events)
        files: tuple[MappedFile, ...] = ()
        available = tuple(range(total))
        count: list[int] = [total]  # buffers available before the first pool event, and after each
        done = 0
        for i, n_appends, seq in zip(events.tolist(), appended_before.tolist(), self.seq[events].tolist()):
            for _ in range(n_appends - done):
                if not (files and files[-1].wrote < size):
                    break  # a full file takes no more messages; the rest of this run changes nothing
                files = append_message(files, size)
            done = n_appends
            kind = self.kind_of(i)
            if kind == workers.WorkerCreatesMappedFile.__name__:
                files, available = create_mapped_file(files, available, c.pool_enabled, size)
            elif kind == commitservice.CommitServiceCommits.__name__:
                at = file_to_commit(files, size)
                finding.one(at is not None, seq, lambda: "a commit with nothing to commit")
                if at is not None:
                    files = commit_file(files, at)
            else:
                at = file_awaiting_return(files, size)
                finding.one(at is not None, seq, lambda: f"a buffer returned while no file is committed to its size {size}: {files}")
                if at is not None:
                    files, available = return_committed_buffer(files, available, at)
            count.append(len(available))
        self.free = np.array(count, np.int64)[_at_or_before(events, self.n)]

    def _busy_answers(self) -> None:
        """[PCBUSY_CLEAN_QUEUE] only while busy; [REJECTREQUEST] only while busy or the pool is deficient."""
        if self.level < 2 or len(self.response_event) == 0:
            return
        index = self.response_remark_index
        timeout = self.config.os_page_cache_busy_timeout_ms

        def busy(at: Ints) -> Mask:
            """spec.putlock.is_os_page_cache_busy after each event ``at``, over arrays: the lock is
            stamped (beginTimeInLock != 0) and timeout < ts - beginTimeInLock < the upper bound."""
            begin = self.begin[at]
            held = self.ts[at] - begin
            result: Mask = (begin != 0) & (held > timeout) & (held < BUSY_UPPER_BOUND_MS)
            return result

        events = self.response_event[self.events.remarks.pcbusy[index]]
        ok = busy(events)
        self.findings["pcbusy_only_while_busy"].add(
            ok, self.seq[events],
            lambda k: f"[PCBUSY_CLEAN_QUEUE] at ts {self.ts[events[k]]} with beginTimeInLock {self.begin[events[k]]}: not busy")
        events = self.response_event[self.events.remarks.reject[index]]
        # spec.storepool.is_transient_store_pool_deficient: the pool is on and no buffer is available.
        ok = busy(events) | (self.config.pool_enabled & (self.free[events] == 0))
        self.findings["rejectrequest_only_while_busy_or_deficient"].add(
            ok, self.seq[events],
            lambda k: f"[REJECTREQUEST] at ts {self.ts[events[k]]}: not busy (beginTimeInLock {self.begin[events[k]]}) "
                      f"and {self.free[events[k]]} buffers available")

    # -- the black-box rules: arrivals and their responses ------------------------------------------

    def _answers(self, header: TraceHeader) -> None:
        """Each request answered exactly once (or at most once where silence is allowed); no response
        before its request; each response's code and remark as the profile writes them."""
        facts = header_facts(header)
        arrivals = np.flatnonzero(self._is(remoting.RequestArrives.__name__))
        opaque = self.request_id[arrivals]  # never null: reading refuses a RequestArrives without request_id
        answered = np.sort(self.response_opaque[self.response_has_opaque])
        got = np.searchsorted(answered, opaque, "right") - np.searchsorted(answered, opaque, "left")
        oneway = self.events.oneway[arrivals]
        code_known = self.events.has_code[arrivals]
        silent = facts["unknown_codes_silent"] & ~np.isin(self.code[arrivals], np.array(facts["answering_codes"], np.int64))
        must = (oneway == 0) & code_known & ~silent
        self.findings["each_request_is_answered_exactly_once"].add(
            np.where(must, got == 1, got <= 1), self.seq[arrivals],
            lambda i: f"opaque {opaque[i]} (code {self.code[arrivals[i]]}, oneway {('none', 'false', 'true')[oneway[i] + 1]}) got {got[i]} responses")
        # A response is matched with every arrival of its opaque (one item each), or none.
        by_opaque = np.argsort(opaque, kind="stable")
        sorted_opaque = opaque[by_opaque]
        lo = np.searchsorted(sorted_opaque, self.response_opaque, "left")
        hi = np.where(self.response_has_opaque, np.searchsorted(sorted_opaque, self.response_opaque, "right"), lo)
        items = np.maximum(hi - lo, 1)
        response = np.repeat(np.arange(len(lo)), items)
        match = np.repeat(lo, items) + (np.arange(len(response)) - np.repeat(np.cumsum(items) - items, items))
        matched = np.repeat(hi > lo, items)
        arrival_seq = np.where(matched, self.seq[arrivals[by_opaque[np.minimum(match, max(len(arrivals) - 1, 0))]]] if len(arrivals) else _NONE, _NONE)
        answer_seq = self.seq[self.response_event[response]]
        self.findings["no_response_before_its_request"].add(
            matched & (arrival_seq < answer_seq), answer_seq,
            lambda i: f"response to opaque {self.response_opaque[response[i]]} at seq {answer_seq[i]}; its request arrived at seq "
                      f"{arrival_seq[i] if matched[i] else 'never'}")
        # Each distinct (code, remark, request code, oneway) is judged once by the rule's predicates;
        # an answer to no request that arrived is no_response_before_its_request's to judge.
        request = self._request_of(self.response_opaque, self.response_has_opaque)
        known = request >= 0
        asked = np.where(known, self.code[np.maximum(request, 0)], _NONE)
        oneway = known & (self.events.oneway[np.maximum(request, 0)] == 1)
        keys = np.stack([self.response_code, self.response_remark_index, asked, oneway.astype(np.int64)], axis=1)
        distinct, key_of = np.unique(keys, axis=0, return_inverse=True) if len(keys) else (keys, np.zeros(0, np.int64))

        def fits(code: int, remark_index: int, request_code: int, is_oneway: int) -> bool:
            remark = self.remarks[remark_index]
            return expected_answer_ok(code, remark, facts) and (
                request_code == _NONE or answer_goes_to(remark, request_code, bool(is_oneway), facts)
            )

        judged = np.array([fits(*(int(v) for v in row)) for row in distinct], bool)
        self.findings["responses_carry_the_profile_codes_and_remarks"].add(
            judged[key_of.reshape(-1)] if len(distinct) else np.zeros(0, bool), self.seq[self.response_event],
            lambda i: f"opaque {self.response_opaque[i]} (code {asked[i] if known[i] else '?'}, oneway {bool(oneway[i])}): "
                      f"answered code {self.response_code[i]} remark {self._remark(i)}")

    def _remark(self, response: int) -> str:
        text = self.remarks[self.response_remark_index[response]]
        return "null" if text is None else text

    # -- the limiter ---------------------------------------------------------------------------------

    def _limiter(self) -> None:
        """Walk the limiter's decisions with each topic's token bucket (spec.limiter)."""
        finding = self.findings["limiter_decisions_as_the_bucket_says"]
        rl = self.config.rate_limit
        events = np.flatnonzero(self._is(remoting.RateLimitHandlerAdmits.__name__, remoting.RateLimitHandlerThrottles.__name__))
        requests = self.request[events]
        walked = (requests >= 0) & rl.enabled
        lost = events[~walked]
        finding.add(np.zeros(len(lost), bool), self.seq[lost],
                    lambda k: f"{self.kind_of(int(lost[k]))} with the limiter {'off' if not rl.enabled else 'on but no request on that thread'}")
        events, requests = events[walked], requests[walked]
        # Buckets are per topic; a request with no topic uses the topic "".
        topics = self.events.topics
        topic = self.events.topic[requests]
        if "" in topics:
            topic = np.where(topic == _NONE, topics.index(""), topic)
        for t in np.unique(topic):
            mine = topic == t
            self._limiter_topic(str(topics[t]) if t >= 0 else "", events[mine], requests[mine])  # -1: Events.of made the null topic -1

    def _limiter_topic(self, topic: str, events: Ints, requests: Ints) -> None:
        """One topic's decisions, in seq order, against its bucket (created at its first decision)."""
        rl = self.config.rate_limit
        qps = rl.send_msg_back_qps if int(self.code[requests[0]]) == RequestCode.CONSUMER_SEND_MSG_BACK else rl.default_qps
        bucket = create_bucket(qps)
        ts = self.ts[events]
        now = ((ts - ts[0]) * 1000).tolist()  # micros on the bucket's stopwatch
        latest = list(accumulate(now, max))
        admitted = [False] * len(events)
        k = 0
        while k < len(events):
            admitted[k], bucket = circuit_breaker_acquire(bucket, now[k], rl.circuit_breaker_open_micros)
            k += 1
            closes = bucket.next_free_ticket_micros + rl.circuit_breaker_open_micros
            if bucket.circuit_open and k < len(events) and latest[k - 1] < closes:
                # While the breaker is open, circuit_breaker_acquire denies and leaves the bucket as it
                # is until now - nextFreeTicketMicros >= the open time: those decisions need no call.
                k = bisect_left(latest, closes)
        admits = self._is(remoting.RateLimitHandlerAdmits.__name__)[events]
        decided = np.array(admitted, bool)
        self.findings["limiter_decisions_as_the_bucket_says"].add(
            decided == admits, self.seq[events],
            lambda i: f"topic {topic!r} at ts {ts[i]}: the bucket {'admits' if decided[i] else 'throttles'}, the trace {self.kind_of(int(events[i]))}")


def scan_trace(header: TraceHeader, table: pa.Table) -> dict[str, Finding]:
    """Run every scan rule over one trace's events (an Arrow table in ``seq`` order, no header)."""
    return TraceScan(header, Events.of(table)).findings
