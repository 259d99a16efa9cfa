"""The reduction of the partial replay's exhaustive search: which candidate states it may drop
because another one it keeps can do everything they can, as far as the trace can tell.

The exhaustive search (:mod:`traces.checking.partial`) keeps every spec state that can explain
the trace so far. Measured on the broken examples projected to ``black-box`` (the trace of
``each_request_is_answered_exactly_once``, at its fourth event: 432 states), most of them differ
only in *when* a hidden step stamped a task (``RequestTask.createTimestamp``: 432 states are 64
without the stamps) and in *which* remoting thread or worker holds which request (252 without the
order of the remoting threads; 36 without both). Neither shows at ``black-box``, and both
multiply with every event. The reduction keeps one *representative* of each class below and
drops a state only when a kept one **simulates** it: every step the dropped state could take in
a run of this trace, the kept one can take too, with the same label (the same observed event,
writing the same responses), reaching a state that again simulates the other's.

Three relations, checked from the spec's rules (``tests/test_traces_reduction.py`` runs the
reduced and the unreduced search side by side, and executes the rules for the first two):

*Symmetry* (``black-box`` only). Permuting the remoting threads, or the workers of one executor
(renaming the put lock's holder alike), maps the spec's transition relation onto itself: every
guard and effect names a remoting thread or a worker only to find its own record
(``spec.remoting._io``, ``spec.workers._worker``); none chooses by index (no "lowest idle thread":
an arrival may take any idle remoting thread, any idle worker may take the head), and a new worker
is appended after the existing ones whatever their order (``DispatchStartsWorker``). Fast failure,
the commit service and the clock do not name threads. At ``black-box`` no observed event names a
thread either: an arrival's ``io_thread`` is absent and tried on every idle thread, a response
carries only the opaque, code and remark. So a state and its permutation have the same observable
futures. At ``queues`` the dispatch and worker events name their thread, and the symmetry is not
used.

*Later stamps* (both levels). A task's ``createTimestamp`` is read only by fast failure
(``spec.fastfailure``: whether the head has waited ``maxWait``, and the wait it reports in the
``[TIMEOUT_CLEAN_QUEUE]`` and ``[PCBUSY_CLEAN_QUEUE]`` remarks); nothing else reads it, and it
goes when the task does. Take a request that the trace never answers with one of those two
remarks (:func:`never_cleaned`, read ahead over the whole trace). A step that cleans or drains
its task writes such an answer, which no event of the trace matches, so no run of the trace takes
it. The other steps that read the stamp are ``FastFailureStopsAtHead`` with that task at the head,
enabled while it is *young*: if it is young with an earlier stamp, it is young with a later one.
So a state whose stamps of such tasks are each no earlier than another state's, all else equal,
simulates it, and the search keeps only states no other kept state dominates so
(:class:`Representatives`). Where the trace pins a stamp (a cleaner's remark, or at ``queues``
the dispatch event's own ``ts``) nothing is dropped.

Why no run is lost. Let the search drop a state ``d`` at time ``t`` because a kept ``k``
simulates it. Any run of the trace through ``d`` continues with steps that ``k`` can match one
by one, with the same observed events and responses, through states that simulate the run's
(the relation is kept by each matched step, and it composes: a state dropped for one that is
itself dropped later is simulated by the one kept then). So the candidate set after each event
still holds, for every run of the full search, a state that simulates the run's, and the event
that no kept candidate explains is one no candidate of the full search explains: *violation*
stays exhaustive. The kept states are real states, each with the real run that reached it, so a
*conformant* verdict's witness is still a run of the spec (the full replay checks it).

*Later lock time* (only for a trace with no answer a busy store writes, no oneway request, and
no ``ts`` 10^7 ms after start: :func:`busy_unseen`). No run of such a trace takes a step that
needs ``isOSPageCacheBusy()`` (each writes a busy answer the trace lacks), and busy is monotone
in the time the lock has been held below that bound: so a later ``beginTimeInLock`` (never
busier) simulates an earlier one, all else equal.

*Busy for good* (both levels, when no ``ts`` is 10^7 ms after start). ``beginTimeInLock`` is
read only by ``isOSPageCacheBusy()``: ``timeout < now - begin < 10^7``. Once a stamp is more than
the timeout in the past it stays so, and the trace ends before the upper bound: two states that
differ only in such stamps are busy at the same times for as long as the stamps stay, and the
stamp leaves alike (reset or replaced by the same steps). They are equivalent, not only similar.

What it does not do. It does not cut interleavings whose states differ in anything else: which
hidden step came first, and when a writer took the lock while that is less than the timeout ago
in a trace that shows busy answers (then ``beginTimeInLock`` decides "busy" both ways: neither
time simulates the other). Those are what the search still enumerates, and why the broken
examples at ``black-box`` still run out of time after their first few events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spec.codes import CLEAN_QUEUE_TAGS, PC_SYNCHRONIZED_REMARK, REJECT_REQUEST_REMARK
from spec.config import BUSY_UPPER_BOUND_MS, BrokerConfig
from spec.frozen import replace
from spec.putlock import Holder, PutLock
from spec.state import BrokerState, Executor, IoThread, QueueElement, RequestTask, Worker
from spec.remoting import DispatchCreatesTask
from traces.format.records import LEVEL_KINDS, Observation, responses_from_record

def never_cleaned(events: Iterable[Mapping[str, Any]]) -> frozenset[int]:
    """The spec's ids of the requests that no event of the trace answers with a cleaner's remark.

    Arrivals are visible at every level, so the k-th arrival is the spec's request k. A request
    whose opaque ever gets a cleaner's answer is left out, whichever arrival it was (the trace's
    opaques need not be unique).
    """
    arrivals: list[int] = []
    cleaned: set[int] = set()
    for e in events:
        if e["kind"] == "RequestArrives":
            arrivals.append(e["request_id"])
        for r in responses_from_record(e):
            if r.remark is not None and any(tag in r.remark for tag in CLEAN_QUEUE_TAGS):
                cleaned.add(r.request_id)
    return frozenset(i for i, opaque in enumerate(arrivals, start=1) if opaque not in cleaned)


def busy_unseen(config: BrokerConfig, events: Iterable[Mapping[str, Any]]) -> bool:
    """Whether no run of the trace can take a step that needs the store busy, and busy grows with
    the time the lock is held: no answer a busy store writes (``[REJECTREQUEST]``,
    ``[PC_SYNCHRONIZED]``, a send-back's busy status, ``[PCBUSY_CLEAN_QUEUE]``), no oneway request
    (whose busy answers may be silent), and the whole trace within ``isOSPageCacheBusy``'s upper
    bound of 10^7 ms after start (past it a longer hold is no longer busy)."""
    remarks = (REJECT_REQUEST_REMARK, PC_SYNCHRONIZED_REMARK, config.profile.page_cache_busy_status, CLEAN_QUEUE_TAGS[0])
    last = config.start_time_ms
    for e in events:
        last = max(last, e["ts"])
        if e["kind"] == "RequestArrives" and e["oneway"]:
            return False
        if any(r.remark is not None and any(tag in r.remark for tag in remarks) for r in responses_from_record(e)):
            return False
    return last - config.start_time_ms < BUSY_UPPER_BOUND_MS


class Reduction:
    """The classes of candidate states for one trace: :meth:`key` and :meth:`stamps` (see the module docstring)."""

    def __init__(self, config: BrokerConfig, level: Observation, events: Iterable[Mapping[str, Any]]) -> None:
        observed = list(events)
        self.symmetric = level is Observation.BLACK_BOX
        # Where the level shows the dispatch that stamps a task, the event's ts pins the stamp.
        stamps_hidden = DispatchCreatesTask.__name__ not in LEVEL_KINDS[level]
        self.free_stamps = never_cleaned(observed) if stamps_hidden else frozenset()
        self.free_lock_time = busy_unseen(config, observed)
        self.busy_timeout = config.os_page_cache_busy_timeout_ms
        # Within the trace, no hold reaches isOSPageCacheBusy's upper bound, so a store busy now stays busy while the stamp stays.
        self.busy_for_good = max((e["ts"] for e in observed), default=config.start_time_ms) - config.start_time_ms < BUSY_UPPER_BOUND_MS

    @property
    def drops_anything(self) -> bool:
        """Whether any two states can fall in one class (else the search is better off without the keys)."""
        return self.symmetric or bool(self.free_stamps) or self.free_lock_time or self.busy_for_good

    def _free(self, task: RequestTask) -> bool:
        return task.request.id in self.free_stamps

    def _erase(self, task: RequestTask) -> RequestTask:
        return replace(task, create_timestamp=0) if self._free(task) else task

    def _element(self, element: QueueElement) -> QueueElement:
        return self._erase(element) if isinstance(element, RequestTask) else element

    def _io(self, io: IoThread) -> IoThread:
        return io if io.task is None else replace(io, task=self._erase(io.task))

    def _worker(self, worker: Worker) -> Worker:
        return worker if worker.task is None else replace(worker, task=self._erase(worker.task))

    def key(self, s: BrokerState) -> BrokerState:
        """``s`` with the free stamps erased and, at ``black-box``, its remoting threads and each
        executor's workers in a canonical order (by the request each holds; idle ones are alike)."""
        if not self.symmetric and not self.free_stamps:  # at queues: only the lock's time (the rest costs time for nothing)
            lock = self._lock_time(s, s.lock)
            return s if lock is s.lock else replace(s, lock=lock)
        io_threads = tuple(self._io(io) for io in s.io_threads)
        holder: Holder | None = s.lock.holder
        executors: list[Executor] = []
        for e in s.executors:
            order = list(range(len(e.workers)))
            if self.symmetric:
                order.sort(key=lambda i: _held(e.workers[i].task))
                if holder is not None and holder[0] == e.name.value:
                    holder = (holder[0], order.index(holder[1]))
            workers = tuple(self._worker(e.workers[i]) for i in order)
            executors.append(replace(e, queue=tuple(self._element(q) for q in e.queue), workers=workers))
        if self.symmetric:
            io_threads = tuple(sorted(io_threads, key=lambda io: _held(io.request)))
        lock = s.lock if holder == s.lock.holder else replace(s.lock, holder=holder)
        return replace(s, io_threads=io_threads, executors=tuple(executors), lock=self._lock_time(s, lock))

    def _lock_time(self, s: BrokerState, lock: PutLock) -> PutLock:
        """``lock`` with its beginTimeInLock as the key keeps it: "some" where a later one simulates
        it (the time is in :meth:`stamps`), "busy for good" where any older one is alike."""
        begin = lock.begin_time_in_lock
        if begin == 0:
            return lock
        if self.free_lock_time:
            return replace(lock, begin_time_in_lock=1)
        if self.busy_for_good and s.now - begin > self.busy_timeout:
            return replace(lock, begin_time_in_lock=-1)
        return lock

    def stamps(self, s: BrokerState) -> tuple[int, ...]:
        """The free stamps of ``s``, in the order of their requests (the same requests for every
        state of one key, since the key keeps each task's request and place)."""
        lock_time = (s.lock.begin_time_in_lock,) if self.free_lock_time and s.lock.begin_time_in_lock != 0 else ()
        if not self.free_stamps:
            return lock_time
        tasks = [io.task for io in s.io_threads if io.task is not None]
        for e in s.executors:
            tasks += [q for q in e.queue if isinstance(q, RequestTask)]
            tasks += [w.task for w in e.workers if w.task is not None]
        return tuple(t.create_timestamp for t in sorted(tasks, key=lambda t: t.request.id) if self._free(t)) + lock_time


def _held(item: Any) -> int:
    """The id of the request a thread holds (a Request or a RequestTask); 0 when idle."""
    if item is None:
        return 0
    return int(item.request.id if isinstance(item, RequestTask) else item.id)


def dominates(later: tuple[int, ...], earlier: tuple[int, ...]) -> bool:
    """Whether every free stamp of ``later`` is no earlier than ``earlier``'s."""
    return all(a >= b for a, b in zip(later, earlier))


class Representatives:
    """The states a search keeps: a state is admitted unless one already admitted simulates it
    (the same key, stamps no earlier). :meth:`kept` drops those a later admission dominates."""

    def __init__(self, reduction: Reduction) -> None:
        self.reduction = reduction
        self.classes: dict[BrokerState, list[tuple[tuple[int, ...], BrokerState]]] = {}

    def admit(self, s: BrokerState) -> bool:
        """Record ``s`` unless an admitted state simulates it; whether it was recorded."""
        members = self.classes.setdefault(self.reduction.key(s), [])
        stamps = self.reduction.stamps(s)
        if any(dominates(other, stamps) for other, _ in members):
            return False
        members.append((stamps, s))
        return True

    def superseded(self, s: BrokerState) -> bool:
        """Whether a state admitted after ``s`` simulates it (strictly later stamps, same key)."""
        stamps = self.reduction.stamps(s)
        return any(other != stamps and dominates(other, stamps) for other, _ in self.classes.get(self.reduction.key(s), ()))

    def kept(self) -> list[BrokerState]:
        """The admitted states that no other admitted state simulates, in the order they were
        admitted (so a violation's explanation lists the same candidates on every run)."""
        return [
            s
            for members in self.classes.values()
            for i, (stamps, s) in enumerate(members)
            if not any(j != i and dominates(other, stamps) and other != stamps for j, (other, _) in enumerate(members))
        ]

