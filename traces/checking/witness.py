"""The witness-first search: one run of the spec whose observable part is the trace, found depth first.

The partial replay's exhaustive search (:mod:`traces.checking.partial`) keeps every spec state
that explains the trace so far. At ``black-box`` that set explodes after a few events: every
hidden thread (remoting threads, workers, the put path, the commit service, fast failure) moves
independently, at any millisecond, and the states are the product of their progress. This search
follows one run instead, and lets the trace steer it:

- A node is a spec state with the number of events it explains. Its children, in the order tried:
  the next event, once the clock is at its ``ts``, as a step writing exactly the recorded
  responses; the hidden steps the next event needs (those of the request it answers, and the
  fast-failure scheduler's, whose run is quick); time moving on; the other hidden steps, the
  request answered soonest first (without the focused guess below, the steps to the put lock
  last: a lock taken early turns the store busy for a send the trace serves). While a put
  holding the lock needs a new file and the pool is empty, the commit service's steps come
  first of all the steps that write nothing, so that the file takes the buffer they give back
  rather than write to the mmap. So a hidden step
  waits until the trace needs it, and a dead end backs up to the last choice with a child left.
  A node met before is not searched again (as far back as :class:`_Visited` remembers).
- Time moves only to the next event's ``ts``, the next due fast-failure run (which starts on
  time, unless the next cleaner's answer is a busy drain that only a run started once the store
  is busy can write: then the run first waits until the millisecond the store turns busy, and a
  run already draining keeps draining for it, its end tried only after time moves; likewise a
  run scanning a queue from which the next cleaner's answer, before the next run is due, takes a
  task past its wait does not stop at a young head until time moves), or a
  task's creation time that a cleaner's remark gives ("period in queue: 63ms" at ``ts`` 194 says
  the task was created at 131; no other time explains that answer); or, tried after that jump, by
  one millisecond while a request waits at the rate-limit handler for a topic that a later
  [RateLimit] answer names (its wait in microseconds depends on the milliseconds at which the
  bucket was read before it, down to the rounding of the permits it stores).
- The trace prunes the steps that would carry a request past the code path that writes its
  answer (a request refused on the remoting thread never becomes a task; one a cleaner answers
  is never taken by a worker; one the put pre-check refuses never passes it), and the states in
  which a task that a cleaner later takes from the head has more tasks behind it than the
  cleaner's remark counts ("size of queue: 5"): none of them can leave first, so no run goes on
  from there. Such a task joins its queue as late as it can. Likewise the states in which a task
  ahead of such a task, or a request on its way to join the queue behind it (on a remoting
  thread, or still to arrive, where every worker has started), is answered before it; in which
  too few tasks are behind it and too few can still join, or fewer must join before it is taken
  than before a task a cleaner takes ahead of it (for such a task still on its remoting thread,
  every task behind it is still to join, and so for the next such request still to arrive,
  behind every task queued now); in which more tasks are ahead of it than the
  executor's workers can take before that answer (a worker takes another task only once it has
  answered the one it holds; for such a task on its remoting thread or the next still to arrive,
  every task queued now is ahead of it, and so are those that must join between it and the task a
  cleaner takes from the queue before it); and in which the millisecond its remark gives for its creation has
  passed without it. And the states in which a queue that an
  [OVERLOAD] of its executor says is full cannot fill by then: its tasks, the requests for it on
  remoting threads and those arriving before that answer (but those refused on the remoting
  thread, and those answered before it) are fewer than its capacity (workers took tasks that had
  to stay queued); checked at the executor's next [OVERLOAD], and at the first after the answer
  of each task in the queue, which has left by then with every task ahead of it (a worker or a
  cleaner takes only the head). And the states in which a task a worker answers has more tasks
  up to it in its queue than the workers can take before that answer, or, once every worker has
  started, than they can take before the answer of a request still to join (it joins behind
  them all). And the states in which too few tasks can still join between two tasks a cleaner
  takes one after the other from a queue (their remarks' sizes less one), the second not in the
  queue yet: those behind the first now, and the requests that may join between them (none a
  cleaner takes, none answered before the first) on remoting threads or arriving before the
  second must have joined (before an arrival that finds no remoting thread free while it waits:
  those behind it and those refused on theirs hold theirs); checked from before the first
  arrives, since a request queued then is ahead of it (those arriving before it count, as they
  may wait on their remoting threads until it has joined). A task a cleaner takes joins no
  sooner than its creation, nor than the task a cleaner takes before it from that queue; a
  request an executor of one worker answers, no sooner than every request that worker answers
  first has arrived. And the states in which a fast-failure run scanning a queue finds a head past
  its wait that a cleaner answers later than the next cleaner's answer, or with a busy drain (it
  stops only at a young head, and answers that head with [TIMEOUT_CLEAN_QUEUE]); and in which
  the next arrival finds no remoting thread that can be free by then, or frees one only by
  queueing more tasks behind a task a cleaner takes than its remark counts; or in which, at the
  last arrival before a cleaner's answer, the requests that can leave their remoting threads only
  by joining its queue must already have put more tasks behind it than its remark counts.
  And the states in which a topic's bucket can no longer bring its next free ticket to the
  microsecond that the next [RateLimit] answer naming it gives (its millisecond plus the wait in
  its remark, where the breaker is closed): the ticket never moves back, and only the admissions
  still to come, at the milliseconds they can have, move it on. And the states in which the
  workers cannot take, between a cleaner's answer and that of a task a cleaner takes that joins
  only after it, the tasks behind the first that no cleaner takes (its remark's count): a
  worker busy with a task answered later, or with one it must take ahead of the first, is not
  free to.
  And the states in which the writer that holds the put lock at an answer that needs it held
  long (the first writer answered after it: writers answer as they unlock) can no longer have
  taken it by that answer's millisecond less the busy timeout, unless a stamp an exception left
  may have the store busy then with no writer holding the lock. And the states in which the store
  is busy for good (the stamp old, the lock free, no worker past the put check) while a writer's
  answer past the check is still to come. And, where the TransientStorePool
  is in use, the states in which the pool can no longer be empty at the next [REJECTREQUEST]
  for which no writer can have the store busy: buffers leave the pool only for new files, one at
  most a writer's hold of the lock and only once the last file is full, and the trace says which
  writers may hold it until then.
- That writer's steps are needed by that answer, not by its own, which comes late for holding
  the lock long.
- A request's remoting-thread steps (the rate-limit handler, the task's creation) are taken at
  once: a send created late may find the store busy and be refused where the trace serves it.
  But a task that would join right behind the queue's tail, which a [TIMEOUT_CLEAN_QUEUE] takes
  before this one's answer, and be past the queue's wait by then, is created once time has moved
  on: the run that takes the tail takes the next head too if it is past its wait. A
  request the trace never answers moves along just ahead of the next request routed to its
  executor, arriving after it, that the trace answers (so that, in a queue that one worker
  serves, it is not left behind a task that worker holds until a later answer, filling the
  queue); *answer order*: that the trace answers from the queue. A later request refused on its
  remoting thread ([OVERLOAD]) says only that the queue is full then; a request hurried by it
  into the queue ahead of a request the trace serves from there may leave too soon for a later
  [OVERLOAD], which needs it still queued. Each guess wins some recordings, and the race keeps both.
- A :class:`Strategy` may add guesses: before an answer of flow control, the steps that load
  the broker (the put path, the queueing) come before time moves on, since such an answer needs
  a lock held long or a queue filled early (*answer order*: only the steps of the requests of the
  executor whose request it answers, so that a request of another waits), but no put path for a
  [REJECTREQUEST] while the pool is empty, which explains it (a writer sent to the lock would
  take the next buffer given back, which a send the trace serves may need first; *answer order*
  loads it all the same, a guess the race keeps beside the other); before the clock passes the last millisecond at which
  a writer can take the free put lock and have held it long enough for the next answer that needs
  it held long, the steps to the lock of the send that the trace says holds it then come first
  (*focused*, also its worker's take from the queue, or the dispatch that starts a worker for it,
  and the takes of the tasks ahead of it in its queue), and at ``black-box`` time moving to that
  millisecond before them (the lock taken then turns the store busy as late as it can, so a send
  whose creation a cleaner's remark dates a few milliseconds before the busy answer still finds
  the store free):
  at ``queues``, where the clock's step is an event, even before the next event; at
  ``black-box``, where the search moves the clock, before it does (taken only when its own answer
  needed them, the lock was found held too briefly, and the search backed up over every choice
  since, at ``queues`` every event of that millisecond); tasks reach an executor in the order its workers
  answer them (at an executor of one thread, whose worker answers in queue order, also after the
  requests still to arrive that it answers first; *answer order*: the executors too, in the
  order the trace answers them all; none waits for a task whose queue is full, nor for one that
  must stay on its thread until a request a cleaner takes has arrived, nor for a request that
  the store refuses now and the trace serves, which cannot become a task until the store frees,
  nor, at an executor of several workers, for one answered in the same millisecond, which those
  workers may answer in either order; and a request the trace never answers waits for none, nor
  does any wait for it, since nothing says when it joins); and,
  *focused*,
  before an answer only the threads of the executor that runs the answered request move (its remoting threads' dispatch, its workers, the commit service for
  sends), before an arrival only the remoting threads, so that the progress of requests answered much later (an admin queue, a remoting
  thread between arrivals) does not multiply the states searched after an early wrong choice;
  with *full queues*, also, before an arrival that finds every remoting thread busy, the workers
  of a full queue that holds one (its dispatch waits for a worker to take a task).
  Each guess is right for most traces and wrong for some, so the search tries a portfolio of
  strategies, which first race: the one that keeps the pace of a strategy that fits the trace
  keeps its turn, and one that stalls gives way without losing what it searched (:func:`_race`).
- A wrong guess often shows only events later, and backing up one choice at a time searches
  every order of the hidden steps taken since before it reaches the guess. So in the first round
  a strategy that explains no new event for a while backs up by whole events, one, then two,
  four, ... (:meth:`_Search._back_up`); the second round backs up one choice at a time.
- The guess most often wrong is which of two requests waiting on remoting threads for one queue
  joins first: a task a cleaner takes joins as late as it can, so a task a worker answers later
  goes ahead of it, and the trace contradicts that only at the cleaner's answer, tens of events
  on. Likewise a request a worker answers joins as it comes, ahead of a request for its queue
  that the trace never answers, which shows only in how full that queue is and how long its
  workers are busy; and a task a cleaner takes that could not wait any longer joins ahead of a
  later request a worker answers, which shows only in the cleaner's remark. So a
  search that explains no new event for a while (in either round) first learns: it goes back to
  such a join on its path (those whose order shows in an answer near where it is stuck first,
  then some further back) and tries the other order, and keeps the order if it gets past where
  it was stuck, else goes on as it was (:meth:`_Search._learn`); the searches of a trace share
  the orders they learn (:class:`_Orders`).

Soundness. The search only ever takes steps whose guard holds, from the spec's initial state, and
matches every observed event with the responses it recorded: the path it returns *is* a run of
the spec whose projection is the trace, and ``flowspec check --witness`` writes it as a ``full``
trace that the ordinary replay accepts. Everything above (coarse time, pruning, guesses, budgets)
only narrows what it tries, so it can miss a run but never invent one: it says *conformant* or
nothing, never *violation*; when it finds nothing the exhaustive search decides.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spec.actors import Action, CommitServiceStep, FastFailureStep, IoThreadStep, WorkerStep
from spec.codes import CLEAN_QUEUE_PATTERN, CLEAN_QUEUE_TAGS, RATE_LIMIT_PATTERN, ResponseCode
from spec.config import BUSY_UPPER_BOUND_MS, BrokerConfig
from spec.environment import ClockAdvances
from spec.fastfailure import FastFailureEndsBusyDrain, FastFailureSkipsRun, FastFailureStartsRun, FastFailureStopsAtHead, is_expired
from spec.limiter import TokenBucket, reserve_and_get_wait_length
from spec.machine import Effect
from spec.profiles import ExecutorName
from spec.putlock import HA_SERVICE, is_os_page_cache_busy
from spec.remoting import (
    DispatchCreatesTask,
    DispatchQueuesTask,
    DispatchStartsWorker,
    RateLimitHandlerAdmits,
    RequestArrives,
    queue_full,
    reject_request,
    request_to_dispatch,
    route,
)
from spec.storepool import current_file_has_room, is_transient_store_pool_deficient
from spec.state import Bucket, BrokerState, Executor, FastFailurePhase, IoStage, IoThread, RequestTask, Response, WorkerStage, written_as
from spec.workers import WorkerAcquiresPutLock, WorkerPassesPutCheck, WorkerTakesTask, busy_answer
from traces.checking.partial import OutOfBudget, PartialReplay, PartialResult, Trail
from traces.format.records import RESPONSE_KIND, action_from_record, responses_from_record

_NEVER = 1 << 62
#: The urgency of a hidden step tried before every other that writes nothing (:meth:`_Search._urgency`).
_FIRST = -1

#: The steps that would carry a request past the code path that writes its answer, by the
#: answer's tag: a request refused on the remoting thread never becomes a task (or, for
#: [OVERLOAD], never reaches the executor), one the put pre-check refuses never passes it, and one
#: a cleaner answers is never taken by a worker.
_PAST_THE_WRITER: dict[str, frozenset[type[Action]]] = {
    "[RateLimit]": frozenset({RateLimitHandlerAdmits, DispatchCreatesTask}),
    "[REJECTREQUEST]": frozenset({DispatchCreatesTask}),
    "[OVERLOAD]": frozenset({DispatchQueuesTask, DispatchStartsWorker}),
    "[PC_SYNCHRONIZED]": frozenset({WorkerPassesPutCheck}),
    "[PCBUSY_CLEAN_QUEUE]": frozenset({WorkerTakesTask}),
    "[TIMEOUT_CLEAN_QUEUE]": frozenset({WorkerTakesTask}),
}

#: The tags of the answers a worker writes: none (a processor's answer, the put path's) and the put pre-check's.
_WRITTEN_BY_A_WORKER = frozenset({"", "[PC_SYNCHRONIZED]"})
#: The answers written on the remoting thread: such a request never joins a queue.
_REFUSED_ON_THE_REMOTING_THREAD = frozenset(tag for tag, past in _PAST_THE_WRITER.items() if DispatchCreatesTask in past or DispatchQueuesTask in past)

_PUT_PATH: frozenset[type[Action]] = frozenset(
    {DispatchCreatesTask, DispatchStartsWorker, DispatchQueuesTask, WorkerTakesTask, WorkerPassesPutCheck, WorkerAcquiresPutLock}
)
_QUEUEING: frozenset[type[Action]] = frozenset({DispatchCreatesTask, DispatchQueuesTask})
#: A writer's steps up to holding the put lock.
_TO_THE_LOCK = (WorkerPassesPutCheck, WorkerAcquiresPutLock)
#: The steps that give a queued or dispatched request a worker.
_TO_A_WORKER = (WorkerTakesTask, DispatchStartsWorker)
#: What an answer of flow control needs done early: a put lock held long (busy), a queue full, a
#: task waiting.
_LOADS_EARLY: dict[str, frozenset[type[Action]]] = {
    "[REJECTREQUEST]": _PUT_PATH,
    "[PC_SYNCHRONIZED]": _PUT_PATH,
    "[PCBUSY_CLEAN_QUEUE]": _PUT_PATH,
    "[OVERLOAD]": _QUEUEING,
    "[TIMEOUT_CLEAN_QUEUE]": _QUEUEING,
}


@dataclass(frozen=True)
class Strategy:
    """Which guesses the search makes (see the module docstring)."""

    name: str
    loads_early: bool  # before an answer of flow control, load the broker before time moves on
    queue_order: bool  # tasks reach an executor in the order its workers answer them
    any_executor: bool = False  # ... and the executors in the order the trace answers them all
    focused: bool = False  # before an answer only its executor's threads move, before an arrival only the remoting threads
    full_queues: bool = False  # ... and before an arrival that finds every remoting thread busy, the workers of a full queue that holds one
    own_load: bool = False  # ... and only the steps of the requests of the executors whose requests the answer answers
    pool_explains_rejections: bool = True  # ... but none of the put path for a [REJECTREQUEST] while the pool is empty
    refusals_hurry_the_unanswered: bool = True  # a request never answered moves along ahead of a later one refused on its remoting thread too


#: Raced in the first round, tried in turn in the second (:func:`find_witness`).
STRATEGIES = (
    Strategy("trace order", loads_early=True, queue_order=True),
    Strategy("focused", loads_early=True, queue_order=True, focused=True),
    Strategy("focused, full queues", loads_early=True, queue_order=True, focused=True, full_queues=True),
    Strategy(
        "answer order",
        loads_early=True,
        queue_order=True,
        any_executor=True,
        own_load=True,
        pool_explains_rejections=False,
        refusals_hurry_the_unanswered=False,
    ),
)


def _tag(remark: str | None) -> str:
    """The flow-control tag a remark opens with ("[OVERLOAD]"), or ""."""
    return remark[: remark.find("]") + 1] if remark is not None and remark.startswith("[") else ""


_NOTHING: frozenset[type[Action]] = frozenset()
#: The steps that change only the fast-failure scheduler's fields (their "Changes:" in :mod:`spec.fastfailure`).
_MOVES_ONLY_THE_CLEANER: frozenset[type[Action]] = frozenset({FastFailureStartsRun, FastFailureSkipsRun, FastFailureEndsBusyDrain, FastFailureStopsAtHead})
#: The steps that move a task into, along or out of a queue, a request along a remoting thread, or the clock.
_MOVES_QUEUES = (IoThreadStep, FastFailureStep, WorkerTakesTask, ClockAdvances)


def _moved_only_the_cleaner(s: BrokerState, trail: Trail | None) -> bool:
    """Whether the node ``s`` was reached by a step of :data:`_MOVES_ONLY_THE_CLEANER` that wrote
    nothing: its trail ends with that step, taken at this millisecond (a child that time moved on
    keeps its parent's trail)."""
    return trail is not None and type(trail.action) in _MOVES_ONLY_THE_CLEANER and trail.ts == s.now and not trail.responses


class _Event:
    """What every node of the search reads of the next event, read off its record once.

    Never changed once built; a plain class, not a frozen dataclass, for the reason
    :class:`traces.checking.partial.Trail` gives."""

    def __init__(self, record: Mapping[str, Any]) -> None:
        kind: str = record["kind"]
        self.ts: int = record["ts"]
        self.clock = kind == ClockAdvances.__name__  # a ClockAdvances
        self.before: int = self.ts - record["ms"] if self.clock else self.ts  # the clock when its step is taken: a recorded ClockAdvances starts ``ms`` earlier
        self.recorded = responses_from_record(record)  # the responses it carries
        self.arrival = kind == RequestArrives.__name__  # a RequestArrives (numbered when it is explained)
        self.answer = kind == RESPONSE_KIND  # a Response: a hidden step that writes its responses
        #: The action it is, where the record names one (not an answer, nor a black-box arrival, which names no remoting thread).
        self.action: Action | None = None if self.answer or (self.arrival and record.get("io_thread") is None) else action_from_record(record)
        tags = [_tag(r.remark) for r in self.recorded]
        #: What its answers of flow control need done early (:data:`_LOADS_EARLY`).
        self.loads_early = _NOTHING.union(*[_LOADS_EARLY.get(tag, _NOTHING) for tag in tags])
        #: ... while the pool is empty, where a [REJECTREQUEST] is the pool's.
        self.loads_early_pool_empty = _NOTHING.union(*[_LOADS_EARLY.get(tag, _NOTHING) for tag in tags if tag != "[REJECTREQUEST]"])


@dataclass
class _Answers:
    """What the trace says of each request's first answer, read once (keys are the spec's request
    numbers: the requests in the order they arrive)."""

    at: dict[int, int] = field(default_factory=dict)  # the index of the event that answers it
    tag: dict[int, str] = field(default_factory=dict)  # that answer's flow-control tag, or ""
    created_at: dict[int, int] = field(default_factory=dict)  # its task's creation time, where a cleaner's remark gives it
    behind: dict[int, int] = field(default_factory=dict)  # how many tasks were behind it in its queue when a cleaner took it
    by_workers: dict[ExecutorName, list[tuple[int, int]]] = field(default_factory=dict)  # executor -> (event, request) its workers answer, in order
    executor: dict[int, ExecutorName | None] = field(default_factory=dict)  # the executor each request is routed to
    due: dict[int, int] = field(default_factory=dict)  # by when its hidden steps are needed: its answer, or (never answered) the next arrival's
    #: a request never answered -> the soonest answer of a request of its executor arriving after it that joins the queue
    due_in_queue: dict[int, int] = field(default_factory=dict)
    arrivals: dict[ExecutorName | None, list[int]] = field(default_factory=dict)  # executor -> the events at which requests routed to it arrive
    lock_busy: list[int] = field(default_factory=list)  # the events, in order, with an answer of flow control that needs the put lock held long
    #: the same but a [REJECTREQUEST] where the transient store pool is enabled: it may be the
    #: pool's deficiency (isTransientStorePoolDeficient) rather than a lock held long
    lock_surely_busy: list[int] = field(default_factory=list)
    #: the events, in order, with a cleaner's answer: whether it is a busy drain
    #: ([PCBUSY_CLEAN_QUEUE]), and the executor whose queue it takes the task from
    cleaned: list[tuple[int, bool, ExecutorName | None]] = field(default_factory=list)
    silent: set[ExecutorName | None] = field(default_factory=set)  # the executors with a request the trace never answers (its worker may finish unseen)
    #: executor -> the events, in order, at which one of its workers answers (and may then take
    #: another task): a processor's or the put path's answer, or the put pre-check's [PC_SYNCHRONIZED]
    freed: dict[ExecutorName, list[int]] = field(default_factory=dict)
    #: topic -> (event, wait), in order, for the [RateLimit] answers that name it: the event, and
    #: the wait in microseconds its remark gives
    throttled: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: topic -> the events, in order, at which requests for it arrive that its bucket may admit
    #: (every one the trace answers otherwise than with [RateLimit])
    admissible: dict[str, list[int]] = field(default_factory=dict)
    overloaded: dict[ExecutorName, list[int]] = field(default_factory=dict)  # executor -> the events, in order, with an [OVERLOAD] of a request routed to it (its queue full then)
    #: executor -> (event, request), in order, for the requests routed to it that may join its
    #: queue: the event at which each arrives
    joining: dict[ExecutorName, list[tuple[int, int]]] = field(default_factory=dict)
    #: executor -> the events, in order, at which the requests routed to it arrive that can leave
    #: their remoting thread only by joining its queue: answered, and not on that thread
    joiners: dict[ExecutorName, list[int]] = field(default_factory=dict)
    #: a task a cleaner takes -> what must be between it and the next task a cleaner takes from its
    #: queue (:class:`_Between`), where the remarks say at least one task is
    between: dict[int, _Between] = field(default_factory=dict)
    #: (event, task) for each task of :attr:`between`, in the order they arrive: the event at which it arrives
    awaited: list[tuple[int, int]] = field(default_factory=list)
    #: a task a cleaner takes -> the task a cleaner takes from its queue just before it, where
    #: :attr:`between` says tasks must be between the two
    cleaned_before: dict[int, int] = field(default_factory=dict)
    #: a task a cleaner takes -> the soonest millisecond it can join its queue: not before its
    #: creation, nor before the task a cleaner takes from the queue before it can (:meth:`_read_between`)
    joins_from: dict[int, int] = field(default_factory=dict)
    #: request -> the event after which it joins its queue, at the soonest, where the trace's
    #: order of answers says: a worker and a cleaner both take from the head, so a request that
    #: the one worker of its executor answers joins after every request that worker answers first
    #: has arrived, and a task a cleaner takes joins after every task a cleaner takes from its
    #: queue first has arrived (in the same millisecond, where :attr:`joins_from` cannot tell)
    joins_after: dict[int, int] = field(default_factory=dict)
    arrival_events: list[int] = field(default_factory=list)  # the events, in order, at which requests arrive
    #: (event, writer) for each answer that needs the put lock held long ([REJECTREQUEST] but where
    #: the pool may be deficient, [PC_SYNCHRONIZED], [PCBUSY_CLEAN_QUEUE]), in order: the writer
    #: that holds the lock then. A writer (a request that writes the commit log) answers as it
    #: unlocks, so writers answer in the order they held the one lock, and the first to answer
    #: after that event held it then. Where no writer answers after it, none is named.
    holders: list[tuple[int, int]] = field(default_factory=list)
    oneway_writers: bool = False  # whether a writer is oneway (it unlocks without an answer)
    #: The events, in order, at which writers are answered by the put path (past the put check);
    #: of those, the events of the answers that may leave the lock's begin time set (any but
    #: SUCCESS: an exception inside the lock, in the releases whose ``finally`` does not reset it);
    #: and the writers whose SUCCESS resets it as they unlock.
    writer_answers: list[int] = field(default_factory=list)
    stamped: list[int] = field(default_factory=list)
    clean: set[int] = field(default_factory=set)
    #: Where the pool is in use, for :meth:`_Search._pool_cannot_empty`: the events, in order, of
    #: the [REJECTREQUEST] answers (the store busy or the pool empty), and those at which the
    #: writers that may take the put lock arrive (answered by the put path, or never answered).
    rejected: list[int] = field(default_factory=list)
    writer_arrivals: list[int] = field(default_factory=list)
    #: event -> the executors of the requests its answers of flow control answer: whose queue or
    #: put path must be loaded before it (:data:`_LOADS_EARLY`)
    loaded: dict[int, frozenset[ExecutorName | None]] = field(default_factory=dict)
    #: executor -> the events at which the requests its workers answer arrive, and for each the
    #: soonest of the answers of those arriving from it on
    served: dict[ExecutorName, tuple[list[int], list[int]]] = field(default_factory=dict)
    #: the same for the requests a cleaner takes from its queue
    swept: dict[ExecutorName, tuple[list[int], list[int]]] = field(default_factory=dict)
    #: executor -> (event, request), in order, for the requests a cleaner takes from its queue: the event at which each arrives
    cleaned_arrivals: dict[ExecutorName, list[tuple[int, int]]] = field(default_factory=dict)
    #: executor -> (event, tasks, request), in event order, for each task a cleaner takes from its
    #: queue (at that event) before another it takes that cannot have joined by then: of the tasks
    #: behind the first then (its remark's count), all ahead of the second, the workers must take
    #: all but those a cleaner takes in between, and ``tasks`` is how many more than the answers
    #: they write in between (:meth:`_read_drained`)
    drained: dict[ExecutorName, list[tuple[int, int, int]]] = field(default_factory=dict)
    #: executor -> (event, request), in order, for each request a cleaner takes from its queue with
    #: tasks behind it: the event at which it arrives
    counted_arrivals: dict[ExecutorName, list[tuple[int, int]]] = field(default_factory=dict)

    def next_cleaned(self, k: int) -> tuple[int, bool, ExecutorName | None] | None:
        """The first of :attr:`cleaned` at or after event ``k``, or None."""
        c = bisect.bisect_left(self.cleaned, (k, False))
        return self.cleaned[c] if c < len(self.cleaned) else None

    @staticmethod
    def read(config: BrokerConfig, events: Sequence[Mapping[str, Any]]) -> _Answers:
        answers = _Answers()
        named: dict[int, int] = {}  # opaque -> the latest request that arrived with it
        topics: dict[int, str] = {}  # request -> its topic
        codes: dict[int, int] = {}  # request -> its request code
        writing: set[int] = set()  # the requests that write the commit log
        arrived: dict[int, int] = {}  # request -> the event at which it arrives
        for i, record in enumerate(events):
            if record["kind"] == RequestArrives.__name__:
                request = named[record["request_id"]] = len(answers.executor) + 1  # the spec numbers requests as they arrive
                answers.executor[request] = executor = route(config, record["code"])
                answers.arrivals.setdefault(executor, []).append(i)
                arrived[request] = i
                topics[request] = record.get("topic", "")
                codes[request] = record["code"]
                if config.profile.writes_commit_log(record["code"]):
                    writing.add(request)
                    answers.oneway_writers |= bool(record.get("oneway"))
            for r in responses_from_record(record):
                request = named.get(r.request_id, 0)
                if request in answers.at or request not in answers.executor:
                    continue
                answers.at[request] = i
                # A send-back refused at the put check is answered without the tag (:func:`spec.workers.busy_answer`).
                refused = request in writing and (r.code, r.remark) == busy_answer(config.profile, codes[request])
                answers.tag[request] = "[PC_SYNCHRONIZED]" if refused else _tag(r.remark)
                if request in writing and answers.tag[request] == "" and r.code == ResponseCode.SUCCESS:
                    answers.clean.add(request)
                if answers.tag[request] in _LOADS_EARLY:
                    answers.loaded[i] = answers.loaded.get(i, frozenset()) | {answers.executor[request]}
                if _LOADS_EARLY.get(answers.tag[request]) is _PUT_PATH and answers.lock_busy[-1:] != [i]:
                    answers.lock_busy.append(i)
                    if not (config.transient_store_pool_enable and answers.tag[request] == "[REJECTREQUEST]"):
                        answers.lock_surely_busy.append(i)
                limited = RATE_LIMIT_PATTERN.match(r.remark or "")
                if limited is not None:
                    answers.throttled.setdefault(limited.group(1), []).append((i, int(limited.group(2))))
                cleaned = CLEAN_QUEUE_PATTERN.match(r.remark or "")
                if cleaned is not None:
                    busy = answers.tag[request] == "[PCBUSY_CLEAN_QUEUE]"
                    if not answers.cleaned or answers.cleaned[-1][:2] != (i, busy):
                        answers.cleaned.append((i, busy, answers.executor[request]))
                    answers.created_at[request] = record["ts"] - int(cleaned.group(2))
                    answers.behind[request] = int(cleaned.group(3))  # the remark's size is after removal
                executor = answers.executor[request]
                if answers.tag[request] not in _PAST_THE_WRITER and executor is not None:
                    answers.by_workers.setdefault(executor, []).append((i, request))
                if answers.tag[request] in _WRITTEN_BY_A_WORKER and executor is not None:
                    answers.freed.setdefault(executor, []).append(i)
                if answers.tag[request] == "[OVERLOAD]" and executor is not None:
                    answers.overloaded.setdefault(executor, []).append(i)
        for request, executor in answers.executor.items():  # in the order they arrive
            if executor is not None and answers.tag.get(request) not in _REFUSED_ON_THE_REMOTING_THREAD:
                answers.joining.setdefault(executor, []).append((arrived[request], request))
                if answers.leaves_by_joining(request):
                    answers.joiners.setdefault(executor, []).append(arrived[request])
        answers.silent = {answers.executor[request] for request in answers.executor if request not in answers.at}
        for executor, joining in answers.joining.items():
            by_cleaners = answers.cleaned_arrivals[executor] = [(event, request) for event, request in joining if request in answers.behind]
            counted = [(event, request) for event, request in by_cleaners if answers.behind[request] > 0]
            if counted:
                answers.counted_arrivals[executor] = counted
            served = [(event, answers.at[request]) for event, request in joining if answers.tag.get(request, "[") in _WRITTEN_BY_A_WORKER]
            swept = [(event, answers.at[request]) for event, request in by_cleaners]
            answers.served[executor], answers.swept[executor] = _soonest_from(served), _soonest_from(swept)
        answers.arrival_events = sorted(arrived.values())
        writers = sorted((at, request) for request, at in answers.at.items() if request in writing and answers.tag[request] == "")
        answers.writer_answers = [at for at, _ in writers]
        answers.stamped = [at for at, request in writers if request not in answers.clean]
        if config.pool_enabled:
            answers.rejected = sorted(i for request, i in answers.at.items() if answers.tag[request] == "[REJECTREQUEST]")
            answers.writer_arrivals = sorted(arrived[request] for request in writing if answers.tag.get(request, "") == "")
        for held_long in answers.lock_surely_busy:
            w = bisect.bisect_right(writers, (held_long, _NEVER))
            if w < len(writers):
                answers.holders.append((held_long, writers[w][1]))
        for request, event in arrived.items():  # in the order they arrive
            if answers.tag.get(request) != "[RateLimit]":
                answers.admissible.setdefault(topics[request], []).append(event)
        taken: dict[ExecutorName, list[int]] = {}  # executor -> the tasks cleaners take from its queue, in answer order
        for request in sorted(answers.behind, key=answers.at.__getitem__):
            executor = answers.executor[request]
            if executor is not None:
                taken.setdefault(executor, []).append(request)
        answers._read_between(config, arrived, taken)
        answers._read_drained(events, taken)
        latest: dict[ExecutorName, int] = {}  # one-worker executor -> the latest arrival of a request its worker has answered so far
        for request, event in sorted(answers.at.items(), key=lambda answer: answer[1]):
            executor = answers.executor[request]
            if executor is not None and config.executor(executor).threads == 1 and answers.tag[request] in _WRITTEN_BY_A_WORKER:
                answers.joins_after[request] = latest.get(executor, -1)
                latest[executor] = max(latest.get(executor, -1), arrived[request])
        answers.due = answers.at.copy()
        later: dict[ExecutorName | None, int] = {}  # executor -> the soonest answer of the requests routed to it that arrived since
        queued: dict[ExecutorName | None, int] = {}  # ... of those that join its queue
        for request in range(len(answers.executor), 0, -1):
            executor, answered = answers.executor[request], answers.at.get(request, _NEVER)
            if request not in answers.at:
                if executor in later:
                    answers.due[request] = later[executor]
                if executor in queued:
                    answers.due_in_queue[request] = queued[executor]
            later[executor] = min(later.get(executor, _NEVER), answered)
            if answers.tag.get(request) not in _REFUSED_ON_THE_REMOTING_THREAD:
                queued[executor] = min(queued.get(executor, _NEVER), answered)
        for held_long, holder in answers.holders:  # its steps to the lock are needed by then: it is answered late for holding it long
            answers.due[holder] = min(answers.due[holder], held_long)
        return answers

    def _read_between(self, config: BrokerConfig, arrived: Mapping[int, int], cleaned: Mapping[ExecutorName, list[int]]) -> None:
        """:attr:`between`, for each two tasks a cleaner takes one after the other from a queue
        (``cleaned``: each executor's, in the order the trace answers them); and, since Y joins
        behind X, when each can join at the soonest: :attr:`joins_from` and the cleaners' part of
        :attr:`joins_after`.

        Cleaners take only the head, so a queue's cleaned tasks leave in the order the trace
        answers them, and the tasks between two of them, X and then Y, leave between the two
        answers. X's remark counts the tasks behind it when it leaves: those between, Y if it has
        joined, and those behind Y then. Y's counts those behind Y then and those that joined
        behind it since. So at least ``counted(X) - counted(Y) - 1`` tasks are between them in the
        queue, all of which join after X and before Y. None is a task a cleaner takes (it would
        be cleaned between the two), nor one the trace answers before X's answer (a worker takes
        it only after X has left).

        Y joins the queue before an arrival that would find no remoting thread free while Y waits
        on its own: every request that arrived since and that a cleaner takes from the queue after
        Y joins behind it, so it holds its remoting thread as long as Y does; and a request that is
        refused on its remoting thread holds it until its answer."""
        arrivals = self.arrival_events
        arriving = {event: request for request, event in arrived.items()}
        refusing = [0] * (len(arrivals) + 1)  # at each arrival, how many refused requests hold their remoting threads (differences first)
        for request, event in arrived.items():
            if self.tag.get(request) in _REFUSED_ON_THE_REMOTING_THREAD:
                refusing[bisect.bisect_right(arrivals, event)] += 1
                refusing[bisect.bisect_right(arrivals, self.at[request])] -= 1
        holding = dict(zip(arrivals, itertools.accumulate(refusing)))
        for executor, tasks in cleaned.items():
            latest = -1  # the latest arrival of a task a cleaner takes from the queue before this one
            for x, y in zip([None, *tasks], tasks):
                self.joins_from[y] = max(self.created_at[y], -1 if x is None else self.joins_from[x])
                if latest > arrived[y]:
                    self.joins_after[y] = latest
                latest = max(latest, arrived[y])
            joining = self.joining.get(executor, [])
            for x, y in zip(tasks, tasks[1:]):
                need = self.behind[x] - self.behind[y] - 1
                if need <= 0:
                    continue
                joined_by = self.at[y]
                held = 1  # Y, and the requests that must join behind it, on their remoting threads
                for event in arrivals[bisect.bisect_right(arrivals, arrived[y]) : bisect.bisect_left(arrivals, joined_by)]:
                    if held + holding[event] + 1 > config.io_threads:
                        joined_by = event
                        break
                    z = arriving[event]
                    if self.executor[z] is executor and z in self.behind and self.at[z] > self.at[y]:
                        held += 1
                window = joining[bisect.bisect_right(joining, (arrived[x], _NEVER)) : bisect.bisect_left(joining, (joined_by, 0))]
                coming = [event for event, z in window if z != y and self.may_be_between(z, x)]
                self.between[x] = _Between(y, need, coming, arrived[x])
        self.awaited = sorted((between.arrives, x) for x, between in self.between.items())
        self.cleaned_before = {between.next: x for x, between in self.between.items()}

    def _read_drained(self, events: Sequence[Mapping[str, Any]], cleaned: Mapping[ExecutorName, list[int]]) -> None:
        """:attr:`drained`. Cleaners take only the head, so when a cleaner takes task X from a
        queue (``cleaned``: each executor's, in the order the trace answers them), with ``n``
        tasks behind it (its remark's size), and later takes task Y, which joins no sooner than a
        millisecond after X's answer (:attr:`joins_from`), those ``n`` tasks are all ahead of Y
        and leave before Y's answer: those a cleaner takes between the two answers, and the
        others by a worker's take. A worker takes one task at a time and another only
        once it has answered the one it holds, so between the two answers the workers take at most
        as many tasks as were free at X's answer, plus the answers they write in between. Where a
        request of the executor is never answered, its worker may finish it unseen, so no bound is read."""
        for executor, tasks in cleaned.items():
            if executor in self.silent:
                continue
            freed = self.freed.get(executor, [])
            joins = [self.joins_from[y] for y in tasks]
            for i, x in enumerate(tasks):
                y = bisect.bisect_right(joins, events[self.at[x]]["ts"], lo=i + 1)  # the first that joins after X's answer
                if y == len(tasks):
                    break
                answered = bisect.bisect_left(freed, self.at[tasks[y]]) - bisect.bisect_right(freed, self.at[x])
                need = self.behind[x] - (y - i - 1) - answered
                if need > 0:
                    self.drained.setdefault(executor, []).append((self.at[x], need, x))

    def may_be_queued_at(self, request: int, name: ExecutorName, event: int, ts: int) -> bool:
        """Whether ``request`` may be in ``name``'s queue at ``event`` (at ``ts``): it is routed
        there, not refused on its remoting thread, not answered before that event, and it can
        join by then (:meth:`joins_by`)."""
        return (
            self.executor.get(request) is name
            and self.tag.get(request) not in _REFUSED_ON_THE_REMOTING_THREAD
            and self.at.get(request, _NEVER) >= event
            and self.joins_by(request, event, ts)
        )

    def joins_by(self, request: int, event: int, ts: int) -> bool:
        """Whether ``request`` can join its queue before ``event`` (at ``ts``), as far as
        :attr:`joins_from` and :attr:`joins_after` say."""
        return self.joins_from.get(request, 0) <= ts and self.joins_after.get(request, -1) < event

    def leaves_by_joining(self, request: int) -> bool:
        """Whether ``request`` can leave its remoting thread only by joining its executor's queue:
        answered, and not on that thread (:attr:`joiners`)."""
        return self.executor.get(request) is not None and request in self.at and self.tag[request] not in _REFUSED_ON_THE_REMOTING_THREAD

    def stamps_between(self, k: int, event: int) -> bool:
        """Whether a writer's answer that may leave the lock's begin time set (:attr:`stamped`) comes
        from event ``k`` on and before ``event``."""
        return bisect.bisect_left(self.stamped, event) > bisect.bisect_left(self.stamped, k)

    def may_be_between(self, request: int, x: int) -> bool:
        """Whether ``request`` may be between task ``x`` and the next task a cleaner takes from their queue (:meth:`_read_between`)."""
        return request not in self.behind and self.tag.get(request) not in _REFUSED_ON_THE_REMOTING_THREAD and self.at.get(request, _NEVER) > self.at[x]


@dataclass(frozen=True)
class _Try:
    """An order :meth:`_Search._learn` tries, and the search it left to try it."""

    order: tuple[int, int]  # the request held back, the one that joins first
    shared: bool  # whether, once it takes the search past, the searches of the trace follow it (:class:`_Orders`)
    place: int  # the place on the path of the node it goes back to
    frames: list[Iterator[tuple[BrokerState, int, Trail | None]]]  # the frames above that place it left
    path: list[tuple[BrokerState, Trail | None, int]]  # their nodes
    visited: _Visited  # the nodes it had searched


@dataclass
class _Learning:
    """Where a search is stuck, the orders :meth:`_Search._learn` still has to try there."""

    orders: list[tuple[int, tuple[BrokerState, Trail | None, int], int, int, int]]  # see :meth:`_Search._orders_to_try`
    stuck_at: int  # the events explained where it is stuck
    trying: _Try | None = None  # the order tried now
    further: bool = False  # whether the orders are those turning on answers further back
    reached: int = 0  # the most events a node explains since the order tried now was taken up
    outer: _Learning | None = None  # where the try of another order is stuck short of that one's stall: that learning
    inner: list[_Try] = field(default_factory=list)  # the orders learned inside the try that took it past its own stall


@dataclass
class _Orders:
    """The orders learned (:meth:`_Search._learn`), shared by the searches of a trace: the
    strategies stall at the same events, from paths that differ little. An order one has tried
    another does not try again, unless it took that one past where it was stuck: those it tries
    first, and a search of the second round follows them from the start. The second round
    forgets those the first round tried and dropped (:func:`find_witness`): on faults under
    4.3.2, seed 4, "focused" dropped the order "trace order" needs, before that one was stuck
    there, and the trace was inconclusive."""

    tried: set[tuple[int, int]] = field(default_factory=set)  # (the request held back, the one that joins first)
    kept: set[tuple[int, int]] = field(default_factory=set)


@dataclass(frozen=True)
class _Between:
    """What must be between a task a cleaner takes and the next one it takes from that queue (:meth:`_Answers._read_between`)."""

    next: int  # the next task a cleaner takes from the queue
    need: int  # how many tasks at least are between the two
    coming: list[int]  # the events at which the requests arrive that may join between them, before the next must have joined
    arrives: int  # the event at which the first arrives: a request that arrives before it joins between them only by waiting on its remoting thread


class _Search:
    """One strategy's depth-first search over one trace."""

    def __init__(
        self,
        replay: PartialReplay,
        events: Sequence[Mapping[str, Any]],
        read: Sequence[_Event],
        answers: _Answers,
        strategy: Strategy,
        patience: int | None = None,
        orders: _Orders | None = None,
    ) -> None:
        self.replay = replay
        self.events = events
        self.read = read  # each event as read once
        self.answers = answers
        self.strategy = strategy
        self.creation_times = sorted(set(answers.created_at.values()))
        self.searched: dict[int, int] = {}  # events explained -> nodes searched with that many
        self.deepest = 0  # the most events a node it searched explains
        self.searched_all = False  # whether it tried every child it tries without finding a run
        #: (bucket, soonest admissions, answer's microsecond, ticket) -> whether :meth:`_admissions_reach` found it reachable
        self.reached: dict[tuple[TokenBucket, tuple[int, ...], int, int], bool] = {}
        #: Whether :meth:`_holder_too_late` may read :attr:`_Answers.holders`: only where every writer
        #: answers as it unlocks (none oneway; an exception inside the lock is answered as it unlocks too).
        self.holders_known = bool(answers.holders) and not answers.oneway_writers
        self.queues: dict[int, _Queue] = {}  # id of a queue's tuple -> what it says (:meth:`_queue`)
        #: (executor, event) -> from which event on :meth:`_may_join` read the arrivals that may join
        #: its queue and still be there at that event, and the events at which they arrive
        self.may_join: dict[tuple[ExecutorName, int], tuple[int, list[int]]] = {}
        #: Whether the level hides a step that moves a task, a remoting thread or the clock. If it
        #: hides none (``queues``), the trace's own events fix everything :meth:`_no_run_goes_on`
        #: reads, so it says the same of every node that explains as many events and cannot steer.
        self.queues_hidden = any(issubclass(a, _MOVES_QUEUES) for a in replay.hidden_rules)
        #: The steps to the put lock of the send that must hold it at a busy answer (:meth:`_takes_the_lock`).
        self.lock_steps = _TO_THE_LOCK + _TO_A_WORKER if strategy.focused else _TO_THE_LOCK
        #: Each queue an [OVERLOAD] says is full, with the events of those answers and its capacity,
        #: where a bound is read (:meth:`_cannot_fill`): bounded, and no broker code submits to it.
        self.fills = [
            (name, overloaded, capacity)
            for name, overloaded in answers.overloaded.items()
            if (capacity := replay.config.executor(name).capacity) is not None and name not in replay.environment.foreign_tasks
        ]
        self.initial_patience = patience  # spec steps without a new event explained before backing up by whole events (None: never)
        self.patience = patience  # ... now: it doubles each time the back-ups reach the start
        self.gave_up = False  # whether it backed up past choices it had not tried (:meth:`run`)
        # Where the depth-first search stands between two calls of :meth:`run`.
        self.visited = _Visited()
        self.frames: list[Iterator[tuple[BrokerState, int, Trail | None]]] = []  # each node's children still to try, the root's first
        self.path: list[tuple[BrokerState, Trail | None, int]] = []  # each frame's node: its state, trail and the events it explains
        self.progress = 0  # of the spec steps this search took, how many when :attr:`furthest` last grew or it last backed up (an order's try sets it ahead: :meth:`_out_of_patience`)
        self.jump = 1  # how many events the next back-up goes back
        self.furthest = 0  # the most events a node explained since the search last backed up by whole events
        self.used = 0  # the spec steps this search took
        #: Orders learned where the search was stuck (:meth:`_learn`, the kinds at
        #: :meth:`_orders_to_try`): a request held back -> the requests that join its queue before
        #: it (it waits on its remoting thread while one is still to arrive, or on a thread and
        #: free to move), and each of those -> the requests it joins before
        self.held_back: dict[int, set[int]] = {}
        self.hurried: dict[int, set[int]] = {}
        self.learning: _Learning | None = None  # the orders still to try where the search is stuck now
        self.orders = _Orders() if orders is None else orders
        for x, y in self.orders.kept:
            self._hold_back(x, y)

    def run(self, turn: int | None = None) -> PartialResult | str | None:
        """Depth first from the initial state; with :attr:`patience`, backing up by whole events
        when the search makes no progress (see :meth:`_back_up`). Given ``turn``, it pauses
        (None) once it has taken that many spec steps in this call, and the next call goes on
        where it paused: the first round's strategies take turns (:func:`_race`)."""
        replay, events = self.replay, self.events
        if not self.path:  # the first call
            ((root, trail),) = replay.candidates.items()
            if not events:
                return replay.end()  # the initial state explains a trace with no event
            self.visited.first_time(root, 0)
            self.frames.append(self._children(root, trail, 0))
            self.path.append((root, trail, 0))
        frames, path = self.frames, self.path
        started = replay.steps - self.used  # the replay's steps when this search would have taken none
        pause_at = _NEVER if turn is None else replay.steps + turn
        paused = False
        try:
            while frames:
                if replay.steps >= pause_at:
                    paused = True
                    return None
                found = next(frames[-1], None)
                if found is None:
                    frames.pop()
                    path.pop()
                    continue
                s, k, trail = found
                if k == len(events):
                    replay.candidates = {s: trail}
                    replay.events = k
                    replay.sizes = [self.searched.get(i, 0) for i in range(len(events))]
                    return replay.end()
                if not self.visited.first_time(s, k):
                    continue
                self.searched[k] = self.searched.get(k, 0) + 1
                if self.visited.held > replay.budgets.candidates * 20:
                    raise OutOfBudget(f"candidates budget ({replay.budgets.candidates * 20} states remembered) ran out")
                if k > self.furthest:  # further than since it last backed up: its patience starts again
                    self.furthest, self.progress = k, replay.steps - started
                if k > self.deepest:
                    self.deepest, self.jump, self.patience = k, 1, self.initial_patience
                    learning = self.learning
                    while learning is not None:  # past where it was stuck: the orders tried there (and inside the try) stay
                        for tried in (*learning.inner, learning.trying):
                            if tried is not None:
                                self._keep(tried)
                        learning = learning.outer
                    self.learning = None
                elif self._out_of_patience(k, replay.steps - started) and self._learn():
                    self.progress = replay.steps - started + (self.deepest - path[-1][2]) * _PACE
                    continue
                elif self.patience is not None and replay.steps - started - self.progress > self.patience:
                    to = self.furthest - self.jump  # back from where it is stuck now
                    if to < 0:  # it would pass the start: again from one event back, more patient
                        to, self.jump, self.patience = self.furthest - 1, 1, self.patience * 2
                    self._back_up(to)
                    self.progress, self.jump, self.furthest = replay.steps - started, self.jump * 2, max(to, 0)
                    continue
                frames.append(self._children(s, trail, k))
                path.append((s, trail, k))
        except OutOfBudget as e:
            return f"{self.strategy.name}: stopped at seq {events[self.deepest]['seq']} ({e})"
        finally:
            self.used = replay.steps - started
            if not paused:
                self.close()
        self.searched_all = not self.gave_up
        return f"{self.strategy.name}: no run found (as far as seq {events[self.deepest]['seq']})"

    def close(self) -> None:
        """Drop the children still to try. Each frame's generator holds this search, so while it
        holds them the search is a cycle that only the cyclic collector frees, which the partial
        replay keeps off while it searches (:func:`traces.checking.partial._no_cyclic_gc`): the
        first collection after it then had every node searched to scan (0.4 s of steady's 2.45 s).
        An order's try holds the frames it left too (:meth:`_learn`)."""
        self.frames.clear()
        self.learning = None

    def _out_of_patience(self, k: int, taken: int) -> bool:
        """Whether, at a node explaining ``k`` events, this search has taken more spec steps
        than its patience (:attr:`patience`, or :data:`_PATIENCE`) since it last explained a new
        event; ``taken``: the spec steps it took so far. Under an order's try, it notes first how
        far the try got, and where a try inside another's took it past its own stall, that
        order stays with the other's try, which has :data:`_PACE` an event to its stall from
        here (:meth:`_learn`)."""
        learning = self.learning
        if learning is not None and learning.trying is not None and k > learning.reached:
            learning.reached = k
            outer = learning.outer
            if outer is not None and k > learning.stuck_at:
                outer.inner.append(learning.trying)
                outer.reached, self.learning = k, outer
                self.progress = taken + (self.deepest - k) * _PACE
        return taken - self.progress > (_PATIENCE if self.patience is None else self.patience)

    def steps_to_go(self) -> float:
        """The spec steps this search would take to explain the rest of the trace, at the pace
        (events explained for spec steps taken) it kept so far."""
        return (len(self.events) - self.deepest) * self.used / max(self.deepest, 1)

    def _back_up(self, to: int) -> None:
        """Give up the choices made since the node explaining ``to`` events went on to the next
        one: the frames of the nodes explaining more are dropped, and the last node explaining
        ``to`` tries its next child. A wrong guess events back (a lock taken too early, a task
        taken that should have waited) shows only events later, and backing up one choice at a
        time searches every order of the hidden steps since before reaching it; each time the
        search is stuck again without explaining an event further than it had since the last
        back-up, it backs up twice as far from where it is stuck then (:attr:`furthest`). A
        search that had backed up to the start went on from its deepest event, thousands of
        events ahead of where it stood: each such back-up gave up nothing and cost a patience,
        and the bench's full-send-queue trace spent 660,000 of its 1,082,627 spec steps so. What it
        gives up is only what it does not try (a search that backed up never says it searched
        everything), and what it returns is still a path of enabled steps checked event by event."""
        while len(self.frames) > 1 and self.path[-1][2] > to:
            self.frames.pop()
            self.path.pop()
        self.gave_up = True

    def _learn(self) -> bool:
        """Where the search is stuck, go back to where a request joined its queue ahead of one it
        may have joined behind, and try again with the other joining first (the orders are listed
        at :meth:`_orders_to_try`); False where no such order is left to try.

        The search's guess is that a task a cleaner takes joins as late as it can, so that no more
        tasks are behind it than its remark counts. Where it should have joined first, the trace
        shows it only when the remarks' counts no longer fit, often at that task's own answer and
        tens of events after the guess: backing up by whole events searches every order of the
        hidden steps since then before it reaches the guess. The joins on the search's path (the
        frames' nodes) whose order shows in an answer near the event it is stuck at
        (:data:`_ORDER_SHOWN_BEFORE`, :data:`_ORDER_SHOWS_WITHIN`) are tried in turn, at most :data:`_ORDERS_TRIED`
        of them: from the node before the join, with every node forgotten
        as searched (the order changes what is below them). An
        order that takes the search past that event within its patience stays; one that does not
        is dropped, and the search goes back to where it left off (its frames above that node, and
        the nodes it had searched) before the next is tried. Where none is left, it goes on as it
        would have (backing up, in the first round). Only the order in which two steps the spec
        allows either way are tried changes, so what it returns is still a run of the spec.

        In the second round (no back-ups by whole events), where none of those takes it past,
        the orders of the first kind turning on an answer further back
        (:data:`_ORDER_SHOWN_LONG_BEFORE`) are tried the same way, at most
        :data:`_ORDERS_TRIED_FURTHER` of them: a request a worker answers that joined ahead of
        one a cleaner takes may sit on a worker, out of the remarks' counts, until well after the
        cleaner's answer, and the counts stop fitting only once it has left. (Of every kind, they
        cost slow-disk under 4.3.2, seed 2, its witness within 3M spec steps; in the first round
        too, many-topics under 4.3.2, seed 2, took 1,291,448 spec steps instead of 85,470.)

        Also in the second round, where an order's try is stuck short of the stall it was tried
        at, the order may be right and need another before it that the search without it never
        needed: the near orders where the try is stuck are tried inside it the same way, one
        level deep (:meth:`_learning_inside`). One that takes the try past its own stall stays
        with it (:meth:`_out_of_patience`); the try is dropped with every order learned inside it
        (:meth:`_give_up`). On retry-storm under 5.3.3, seed 3, a task a cleaner takes, 214, had
        to join behind 216, which a worker answers, and with that order the search was stuck
        150 events back until it learned that 161 joins behind 159; likewise 1363 behind 1364
        needed 1308 behind 1304.

        Found on retry-storm under 4.3.2 and 4.9.8 and many-topics under 5.3.3 (10,000 steps),
        which no strategy explained: held requests 473 and 470 at event 879, whose order shows only
        at 470's answer at event 983; many-topics learns three such orders. On full-send-queue
        under 4.3.2, whose admin queue (one worker) took 1354 ahead of 1356, never answered, and
        was full 400 events on. On a second seed (1) of steady under 4.3.2, whose admin queue took
        never-answered 219 ahead of 218 (both on remoting threads), and of slow-disk under 5.3.3,
        which kept 344, taken by a cleaner, on its remoting thread until 346, still to arrive, had
        joined. On a third seed (2) of retry-storm, which held 840, answered by a worker, on its
        remoting thread until 841, taken by a cleaner and still to arrive, had joined; and of
        many-topics under 5.3.3, whose send queue (two workers) took 308, taken by a cleaner at
        event 621, ahead of 307, answered by a worker at 627, and where the search that had 307
        join first was stuck at 637."""
        learning = self.learning
        if learning is None:
            learning = self.learning = _Learning(self._orders_to_try(self.deepest), self.deepest)
        elif learning.trying is not None:  # the order tried did not take it past
            inner = self._learning_inside(learning)
            if inner is None:
                self._give_up(learning)
            else:
                learning = self.learning = inner
        while not learning.orders:
            if not learning.further and learning.outer is None and self.initial_patience is None:
                learning.orders, learning.further = self._orders_to_try(self.deepest, further=True), True
            elif learning.outer is None:
                return False
            else:  # none inside took the try past its own stall: that try did not take it past either
                learning = self.learning = learning.outer
                self._give_up(learning)
        place, node, x, y, kind = learning.orders.pop(0)
        place = min(place, len(self.path))
        learning.reached = node[2]
        learning.trying = _Try((x, y), kind < 3, place, self.frames[place:], self.path[place:], self.visited)
        self.orders.tried.add((x, y))
        self._hold_back(x, y)
        del self.frames[place:], self.path[place:]
        self.visited = _Visited()
        self.visited.first_time(node[0], node[2])
        self.frames.append(self._children(*node))
        self.path.append(node)
        self.jump, self.gave_up = 1, True
        return True

    def _learning_inside(self, learning: _Learning) -> _Learning | None:
        """Where an order's try is stuck short of the stall it was tried at, the orders to try
        inside it, at the events it explained (:meth:`_learn`), or None: in the second round, not
        inside a try inside another, and where it lists some."""
        if learning.outer is not None or self.initial_patience is not None or learning.reached >= learning.stuck_at:
            return None
        orders = self._orders_to_try(learning.reached, inside=True)
        return _Learning(orders, learning.reached, outer=learning) if orders else None

    def _give_up(self, learning: _Learning) -> None:
        """The order ``learning`` tried did not take the search past: back to the search it left,
        undoing the orders learned inside its try the latest first."""
        assert learning.trying is not None
        for left in (*reversed(learning.inner), learning.trying):
            self._let_go(*left.order)
            del self.frames[left.place :], self.path[left.place :]
            self.frames += left.frames
            self.path += left.path
            self.visited = left.visited
        learning.trying, learning.inner = None, []

    def _hold_back(self, x: int, y: int) -> None:
        """Follow an order learned (:meth:`_learn`): ``x`` joins its queue after ``y``."""
        self.held_back.setdefault(x, set()).add(y)
        self.hurried.setdefault(y, set()).add(x)

    def _keep(self, tried: _Try) -> None:
        """An order tried took the search past where it was stuck: this search follows it on, and
        the others too (:class:`_Orders`), but for the third kind of :meth:`_orders_to_try`: that
        one others may try again where they are stuck, but do not follow from their start. On the
        bench's full-send-queue trace, such orders took first-round searches past one stall to a
        later one; shared, they were followed from the start by the second round too, and the
        trace was inconclusive within 120 s (2.1M spec steps) instead of conformant in 1,070,196."""
        if tried.shared:
            self.orders.kept.add(tried.order)
        else:
            self.orders.tried.discard(tried.order)

    def _let_go(self, x: int, y: int) -> None:
        """Drop an order :meth:`_hold_back` follows."""
        self.held_back[x].discard(y)
        self.hurried[y].discard(x)

    def _orders_to_try(self, at: int, further: bool = False, inside: bool = False) -> list[tuple[int, tuple[BrokerState, Trail | None, int], int, int, int]]:
        """The joins :meth:`_learn` tries to reorder, best first: the place on the path of the
        node before the join, that node, the request X that joined, the request Y that joins
        first instead, and the order's kind. Three kinds, tried in this order (after the orders another search kept; of
        one kind, the answer the order turns on nearest the stuck event first, and of those the
        latest join):

        1. X a worker answers, Y for the same queue on a remoting thread then, or the next request
           for it still to arrive (:meth:`_arriving`), a cleaner takes Y before X's answer (the
           order turns on Y's answer): the remarks' counts show it.
        2. X a worker answers, Y for the same queue the trace never answers, on a remoting thread
           then or, where the queue is full at the node the search backed up to, the next such
           request still to arrive. Y shows where it joined only by how
           full its queue is and how long the workers are busy (the order turns on X's answer).
        3. X a cleaner takes, Y one its workers answer just after it (:meth:`_on_the_workers_when_cleaned`),
           on a remoting thread then or still to arrive:
           ahead of X, Y is not among the tasks X's remark counts (the order turns on X's
           answer). Tried last, and not followed by the other searches (:meth:`_keep`).

        An order this search follows is not tried, nor one that a search tried and did not keep
        (:class:`_Orders`), but inside another's try (``inside``, :meth:`_learning_inside`), where
        the order tried outside changes what fits. ``at``: the events explained where the search (or
        the try) is stuck; ``further``: those of the first kind whose answer comes before the
        others' (:meth:`_learn`)."""
        answers = self.answers
        # (whether no search kept it, its kind, how far from the stuck event the answer it turns on comes, place, x, y)
        found: list[tuple[bool, int, int, int, int, int]] = []
        stuck = self.path[-1][0]  # the node the search backed up to from where it is stuck
        full = {e.name for e in stuck.executors if queue_full(self.replay.config, stuck, e.name)}

        # Where the answer an order turns on may come. (No second closure for it: compiled, two
        # closures that call each other hold their scope, and with it this search, in a cycle.)
        if further:
            soonest, latest, tried = at - _ORDER_SHOWN_LONG_BEFORE, at - _ORDER_SHOWN_BEFORE - 1, _ORDERS_TRIED_FURTHER
        else:
            soonest, latest, tried = at - _ORDER_SHOWN_BEFORE, at + _ORDER_SHOWS_WITHIN, _ORDERS_TRIED

        def consider(kind: int, answer: int, place: int, x: int, y: int) -> None:
            new = (x, y) not in self.orders.kept
            if soonest <= answer <= latest and not (new and not inside and (x, y) in self.orders.tried) and y not in self.held_back.get(x, ()):
                found.append((new, kind, abs(answer - at), place, x, y))

        for place in range(len(self.path) - 1):
            (s, trail, level), (_, after, _) = self.path[place], self.path[place + 1]
            if after is trail or after is None or not isinstance(after.action, DispatchQueuesTask):
                continue
            joined = s.io_threads[after.action.io_thread].request
            x = None if joined is None else joined.id
            if x is None or x not in answers.at:
                continue
            # Whether an order turning on x's answer (the second and third kinds) may be tried: not
            # further back, where only the first kind's, turning on the cleaner's answer, are.
            shows = not further and soonest <= answers.at[x] <= latest
            if answers.tag[x] in CLEAN_QUEUE_TAGS:  # it may have joined behind a request a worker answers after it
                for ahead in self._on_the_workers_when_cleaned(x) if shows else ():
                    if _on_a_remoting_thread(s, ahead) or level <= answers.arrival_events[ahead - 1] < answers.at[x]:
                        consider(3, answers.at[x], place, x, ahead)
                continue
            if answers.tag[x] not in _WRITTEN_BY_A_WORKER:
                continue
            unanswered = next((y for y in self._arriving(x, level) if y not in answers.at), None) if shows and answers.executor[x] in full else None
            if unanswered is not None:
                consider(2, answers.at[x], place, x, unanswered)
            arriving = next(self._arriving(x, level), None)
            if arriving is not None and self._cleaned_first(arriving, x):
                consider(1, answers.at[arriving], place, x, arriving)
            for io in s.io_threads:
                y = None if io.request is None else io.request.id
                if y is None or y == x or answers.executor.get(y) is not answers.executor[x]:
                    continue
                if self._cleaned_first(y, x):
                    consider(1, answers.at[y], place, x, y)
                elif shows and y not in answers.at:
                    consider(2, answers.at[x], place, x, y)
        found.sort(key=lambda order: (order[0], order[1], order[2], -order[3]))  # those kept, then by kind, the nearest first, and of those the latest join
        return [(place, self.path[place], x, y, kind) for _, kind, _, place, x, y in found[:tried]]

    def _cleaned_first(self, y: int, x: int) -> bool:
        """Whether a cleaner takes ``y`` before ``x``'s answer (the first kind of
        :meth:`_orders_to_try`)."""
        return self.answers.tag.get(y) in CLEAN_QUEUE_TAGS and self.answers.at[y] < self.answers.at[x]

    def _on_the_workers_when_cleaned(self, x: int) -> list[int]:
        """Of ``x``'s queue, ``x`` a task a cleaner takes, the requests its workers answer first
        after ``x``'s answer, as many as the queue has workers. A cleaner takes only the head, so a
        task that joined ahead of ``x`` and is answered after it was on a worker when ``x`` was
        taken, and a worker holds one task: such a task is one of these, unless a worker that took
        a task after ``x`` reached the put lock before it. (At queues of several workers since
        faults under 4.9.8, seed 3, which needed it; full-send-queue under 5.3.3, seed 1, tries
        and drops more orders for it, 247,380 spec steps instead of 149,991.)"""
        answers = self.answers
        executor = answers.executor[x]
        if executor is None:
            return []
        by_workers = answers.by_workers.get(executor, [])
        first = bisect.bisect_right(by_workers, (answers.at[x], _NEVER))
        after = by_workers[first : first + self.replay.config.executor(executor).threads]
        return [y for _, y in after if answers.tag.get(y) in _WRITTEN_BY_A_WORKER]

    def _arriving(self, x: int, k: int) -> Iterator[int]:
        """The requests routed to ``x``'s executor that arrive after ``k`` events, before ``x``'s
        answer, in arrival order."""
        answers = self.answers
        executor = answers.executor[x]
        joining = [] if executor is None else answers.joining.get(executor, [])
        for event, y in itertools.islice(joining, bisect.bisect_left(joining, (k, -1)), None):
            if event >= answers.at[x]:
                return
            yield y

    def _children(self, s: BrokerState, trail: Trail | None, k: int) -> Iterator[tuple[BrokerState, int, Trail | None]]:
        """The children of a node, in the order they are tried (see the module docstring)."""
        replay, record, event = self.replay, self.events[k], self.read[k]
        if time.monotonic() > replay.deadline:
            raise OutOfBudget(f"time budget ({replay.deadline_seconds:g} s) ran out")
        if self._no_run_goes_on(s, k, _moved_only_the_cleaner(s, trail)):
            return
        # The hidden steps enabled here, each guard read once, and each step's effect once taken
        # (by its place in ``enabled``): an answer's event is such a step that writes it, and the
        # same steps are the silent children after it.
        enabled: list[tuple[Action, Effect]] | None = None
        taken: dict[int, tuple[BrokerState, tuple[Response, ...]]] = {}
        if event.clock and self.strategy.loads_early and s.lock.holder is None and self._lock_due(s, k, event.ts) is not None:
            enabled = replay.enabled_hidden(s)
            yield from self._silent(s, k, trail, [(i, a, effect) for i, (a, effect) in enumerate(enabled) if self._takes_the_lock(s, a, k)], taken)
        if s.now == event.before:
            if event.arrival:
                replay.number(record["request_id"], (s,))
            expected = [(replay.id_of.get(r.request_id), r.code, r.remark) for r in event.recorded]
            if event.answer:
                enabled = replay.enabled_hidden(s)
                answered = {request for request, _, _ in expected}
                for i, (a, effect) in enumerate(enabled):
                    if isinstance(a, (IoThreadStep, WorkerStep)) and _request_served(s, a) not in answered:
                        continue  # a remoting thread or a worker answers only the request it holds
                    after, written = taken[i] = replay.take(s, a, effect)
                    if written_as(written, expected):
                        yield after, k + 1, Trail(trail, a, event.ts, event.recorded)
            elif event.action is not None:  # the one action the record names
                moved = replay.step(s, event.action)
                if moved is not None and written_as(moved[1], expected):
                    yield moved[0], k + 1, Trail(trail, event.action, event.ts, event.recorded)
            else:
                for a, after, written in replay.explanations(s, record):
                    if written_as(written, expected):
                        yield after, k + 1, Trail(trail, a, event.ts, event.recorded)
                        if event.arrival:
                            break  # idle remoting threads are alike: the lowest stands for them all
        # A hidden step's effect is taken only when the step is tried (most nodes' first child
        # leads on); one that writes a response is no silent step and is passed over then.
        if enabled is None:
            enabled = replay.enabled_hidden(s)
        silent = sorted(
            (urgency, i, a, effect)
            for i, (a, effect) in enumerate(enabled)
            if (urgency := self._urgency(s, a, k)) is not None
        )
        early = _NOTHING
        if self.strategy.loads_early:
            pool_empty = self.strategy.pool_explains_rejections and is_transient_store_pool_deficient(s.available_buffers, replay.config.pool_enabled)
            early = event.loads_early_pool_empty if pool_empty else event.loads_early
        loaded = self.answers.loaded.get(k, frozenset()) if self.strategy.own_load else None
        now: list[tuple[int, Action, Effect]] = []
        later: list[tuple[int, Action, Effect]] = []
        for urgency, i, a, effect in silent:
            if urgency <= 0 or (type(a) in early and (loaded is None or self.answers.executor.get(_request_served(s, a) or 0) in loaded)):
                now.append((i, a, effect))
            else:
                later.append((i, a, effect))
        busy_at = self._run_waits_until(s, k, event.before)
        if busy_at is not None:
            moved = replay.step(s, ClockAdvances(busy_at - s.now))
            if moved is not None:
                yield moved[0], k, trail
        yield from self._silent(s, k, trail, now, taken)
        before = event.before
        if s.now < before:
            due = replay.clock_guard_due(s)
            if due is None or due > s.now:  # a due run starts before time moves on
                target = before if due is None else min(before, due)
                created = bisect.bisect_right(self.creation_times, s.now)
                if created < len(self.creation_times):
                    target = min(target, self.creation_times[created])
                last = self._lock_due(s, k, target) if self.strategy.loads_early and s.lock.holder is None else None
                if last is not None:
                    if last > s.now:
                        # Time first moves to that last millisecond: the lock taken then is held
                        # long enough and turns the store busy as late as it can, so a send whose
                        # creation a remark dates before it still finds the store free.
                        moved = replay.step(s, ClockAdvances(last - s.now))
                        if moved is not None:
                            yield moved[0], k, trail
                    lock = [(i, a, effect) for i, a, effect in later if self._takes_the_lock(s, a, k)]
                    later = [step for step in later if step not in lock]
                    yield from self._silent(s, k, trail, lock, taken)
                moved = replay.step(s, ClockAdvances(target - s.now))
                if moved is not None:
                    yield moved[0], k, trail
                if target - s.now > 1 and self._waits_at_a_read_limiter(s, k):
                    moved = replay.step(s, ClockAdvances(1))  # the admission a millisecond later (its bucket's rounding)
                    if moved is not None:
                        yield moved[0], k, trail
        if self.strategy.focused:
            later = [(i, a, effect) for i, a, effect in later if self._on_the_way(s, a, record)]
        else:
            # The put lock taken before the trace needs it makes the store busy sooner, which shows
            # only events later (a send's dispatch refused); the lock in time for a busy answer is
            # taken above, so the steps to it come last among the steps no event needs yet.
            lock = [step for step in later if isinstance(step[1], _TO_THE_LOCK)]
            later = [step for step in later if step not in lock] + lock
        yield from self._silent(s, k, trail, later, taken)

    def _silent(
        self,
        s: BrokerState,
        k: int,
        trail: Trail | None,
        steps: Sequence[tuple[int, Action, Effect]],
        taken: dict[int, tuple[BrokerState, tuple[Response, ...]]],
    ) -> Iterator[tuple[BrokerState, int, Trail | None]]:
        """The children by these hidden steps that write nothing, in turn; each step taken once a
        node (``taken`` keeps them by their place among the enabled steps)."""
        for i, a, effect in steps:
            if i not in taken:
                taken[i] = self.replay.take(s, a, effect)
            after, written = taken[i]
            if not written:
                yield after, k, Trail(trail, a, after.now, ())

    def _waits_at_a_read_limiter(self, s: BrokerState, k: int) -> bool:
        """Whether a request waits at the rate-limit handler for a topic whose bucket a later
        [RateLimit] answer reads. Every decision re-reads the bucket (Guava's ``resync`` adds the
        permits earned since the last one), and the doubles it adds round by where the time is
        split: the same permits earned in one read or in two can differ in the last bit, and the
        remark's wait ("need wait:2998microsecs", truncated) with them. So the millisecond of an
        admission, which the wire does not show, can decide a later remark."""
        if not self.answers.throttled or not self.queues_hidden:
            return False
        for io in s.io_threads:
            if io.stage is IoStage.RECEIVED and io.request is not None:
                throttled = self.answers.throttled.get(io.request.topic, [])
                if bisect.bisect_left(throttled, (k, -1)) < len(throttled):
                    return True
        return False

    def _on_the_way(self, s: BrokerState, a: Action, record: Mapping[str, Any]) -> bool:
        """Whether a hidden step can bear on the next event: before an arrival, a remoting
        thread's (the arrival needs an idle one) and, with ``full_queues``, where none is idle, a
        worker's of an executor whose full queue holds a remoting thread (its dispatch waits for a
        worker to take a task); before an answer, a step of the executor that runs the answered
        request (its queue, its workers, its remoting threads' dispatch) and, for the send
        executor, the commit service's (the pool). Other threads' progress cannot enable or
        disable the event, so it waits until the trace needs it."""
        if record["kind"] == RequestArrives.__name__:
            if self.strategy.full_queues and isinstance(a, WorkerStep) and all(io.request is not None for io in s.io_threads):
                return queue_full(self.replay.config, s, a.executor) and any(self.answers.executor.get(io.request.id) is a.executor for io in s.io_threads if io.request is not None)
            return isinstance(a, IoThreadStep)
        executors = {self.answers.executor.get(r.request_id) for r in responses_from_record(record)}
        if isinstance(a, IoThreadStep):
            request = s.io_threads[a.io_thread].request
            return request is not None and route(self.replay.config, request.code) in executors
        if isinstance(a, WorkerStep):
            return a.executor in executors
        if isinstance(a, CommitServiceStep):
            return ExecutorName.SEND in executors
        return True

    def _no_run_goes_on(self, s: BrokerState, k: int, cleaner_moved: bool = False) -> bool:
        """Whether the queues or remoting threads already contradict what the trace says later, so
        that no run of the spec goes on from here. Workers and cleaners take only a queue's head,
        so a task leaves its queue after every task ahead of it, and a task a cleaner answers leaves
        at that answer: a task ahead of it, or one still to join the queue behind it, cannot be
        answered before it; nor can it have more tasks behind it than the cleaner's remark counts
        ("size of queue: 5"), nor fewer than can still join before that answer (:class:`_Queue`;
        the remark less those behind it now is how many join before it is taken, no fewer than
        for a task a cleaner takes ahead of it;
        for a task still on its remoting thread, all of them are still to join), nor
        more tasks ahead of it than the workers can take by then (:meth:`_ahead_cannot_leave`). And a
        task whose creation time a cleaner's remark gives is created at that millisecond, not after it.
        A queue that an [OVERLOAD] says is full must still be able to fill by then (:meth:`_cannot_fill`),
        and enough tasks must still be able to join between two tasks a cleaner takes one after
        the other (:meth:`_too_few_between`), and the workers must be free to take the tasks
        behind a cleaned task before a later cleaned task that joins after it leaves (:meth:`_behind_cannot_leave`).
        A request still to arrive joins behind every task queued now, so no cleaner takes it
        before one of those (:data:`_Answers.swept`). A cleaner's answer needs a run that can
        still write it at its millisecond: the one in progress, if it has not passed that
        answer's queue, or one due by then (:meth:`_no_run_cleans_in_time`).

        ``cleaner_moved``: ``s`` is a child of a node this found no contradiction in, by a step
        that changed only the fast-failure scheduler's fields (:data:`_MOVES_ONLY_THE_CLEANER`),
        so only the checks that read them (:meth:`_cleaner_cannot_go_on`) can say otherwise now (a third of the steps of most
        recordings, nine in ten of slow-disk's, are such steps)."""
        answers = self.answers
        if not self.queues_hidden:
            return False
        if cleaner_moved:
            return self._cleaner_cannot_go_on(s, k)
        if self.fills and self._cannot_fill(s, k):
            return True
        cleaned_last: dict[ExecutorName, int] = {}  # executor -> the latest answer of a task in its queue that a cleaner takes
        for e in s.executors:
            if not e.queue:
                continue  # nothing in it to contradict, and no answer for a task submitted now to come after
            queue = self._queue(e)
            if queue.contradicted:
                return True
            if queue.short is not None:
                # Those that may still join: the requests on remoting threads now, and those arriving from event k on.
                held = sum(1 for io in s.io_threads if io.request is not None and answers.executor.get(io.request.id) is e.name)
                if held - bisect.bisect_left(answers.arrivals.get(e.name, []), k) < queue.short:
                    return True
            if queue.left >= 0 and len(e.workers) == self.replay.config.executor(e.name).threads:  # a task submitted now joins the queue
                cleaned_last[e.name] = queue.left
            if self._ahead_cannot_leave(s, e, k, queue):
                return True
            if queue.room and self._threads_force_joins(s, e, k, queue):
                return True
            if queue.left >= 0 and _answered_before(answers.swept.get(e.name), k, queue.left):
                # A request still to arrive that a cleaner takes from this queue joins behind every
                # task in it, so a cleaner takes it after them: not before a cleaned task's answer.
                return True
        for name, left in cleaned_last.items():
            # A request still to arrive that its workers answer before that cleaned task's answer
            # joins behind it, and cannot be taken in time (the twin, for one on a remoting thread, is below).
            if _answered_before(answers.served.get(name), k, left):
                return True
        if answers.between and self._too_few_between(s, k):
            return True
        if self._cleaner_cannot_go_on(s, k):
            return True
        if self._arrival_forces_joins(s, k):
            return True
        if answers.throttled and self._bucket_cannot_throttle(s, k):
            return True
        if self.holders_known and self._holder_too_late(s, k):
            return True
        if answers.rejected and self._pool_cannot_empty(s, k):
            return True
        if answers.writer_answers and self._busy_for_good(s, k):
            return True
        if answers.drained and self._behind_cannot_leave(s, k):
            return True
        if answers.counted_arrivals and self._too_few_behind_next_arrival(s, k):
            return True
        for io in s.io_threads:
            if io.request is None:
                continue
            request = io.request.id
            created = answers.created_at.get(request)
            if created is not None and created < s.now and io.stage is not IoStage.TASK_CREATED:
                return True
            counted = answers.behind.get(request)
            executor = answers.executor.get(request)
            if counted is not None and executor is not None and executor not in self.replay.environment.foreign_tasks:
                # Not in its queue yet: every task behind it when the cleaner takes it joins from now on.
                if self._may_join(s, executor, k, answers.at[request], request) < counted:
                    return True
            if not cleaned_last:
                continue
            joins = answers.tag.get(request) not in _REFUSED_ON_THE_REMOTING_THREAD
            if joins and executor is not None and answers.at.get(request, _NEVER) < cleaned_last.get(executor, -1):
                return True
        return False

    def _holder_too_late(self, s: BrokerState, k: int) -> bool:
        """Whether the writer that holds the put lock at the next answer that needs it held long
        (:attr:`_Answers.holders`) can no longer have taken it by then: ``isOSPageCacheBusy`` at
        that answer's millisecond needs the lock taken at least the busy timeout and a millisecond
        earlier. So it is dropped where that millisecond has passed and the writer has not taken
        the lock (or took it later), and where the writer has no worker yet, none is free, and
        none answers by then (a worker takes another task only once it has answered the one it
        holds). Where an exception inside the lock may leave its stamp (4.3.2, 5.3.3), the store
        may be busy at that answer with no writer holding the lock (nor the HA service, which never
        stamps): nothing is read then where such a stamp is left now, or an exception is answered
        from now on before that answer. faults under 5.3.3, seed 6, declares exceptions: the
        search kept, for 40 ms, states in which the holder of a [REJECTREQUEST] at 5,170 ms had not
        taken the lock by 5,149."""
        answers = self.answers
        h = bisect.bisect_left(answers.holders, (k, -1))
        if h == len(answers.holders):
            return False
        busy, holder = answers.holders[h]
        if s.lock.holder in (None, HA_SERVICE) and s.lock.begin_time_in_lock != 0 or answers.stamps_between(k, busy):
            return False  # a stamp an exception left (now, or before that answer) may have the store busy with no writer holding the lock
        deadline: int = self.events[busy]["ts"] - self.replay.config.os_page_cache_busy_timeout_ms - 1
        name = answers.executor.get(holder)
        if name is None:
            return False
        executor = s.executor(name)
        for i, worker in enumerate(executor.workers):
            if isinstance(worker.task, RequestTask) and worker.task.request.id == holder:
                if s.lock.holder == (name.value, i):
                    return s.lock.begin_time_in_lock > deadline
                return s.now > deadline
        if s.now > deadline:
            return True
        if len(executor.workers) < self.replay.config.executor(name).threads:
            return False  # a dispatch may start a worker for it
        for worker in executor.workers:
            if not isinstance(worker.task, RequestTask):
                return False  # free, or a task of the broker's own
            at = answers.at.get(worker.task.request.id)
            if at is None or at < k or self.events[at]["ts"] <= deadline:
                return False  # its worker may be free in time
        return True

    def _pool_cannot_empty(self, s: BrokerState, k: int) -> bool:
        """Whether the pool can no longer be empty at the next [REJECTREQUEST] answer where the
        store cannot be busy then. That answer needs the store busy or the pool empty
        (``rejectRequest``). Busy at its millisecond needs the lock's begin time set more than the
        busy timeout before: the one set now, unless its holder is a writer whose SUCCESS comes
        before that answer (it resets the time as it unlocks); or one a writer sets from now on,
        where that is soon enough, and that writer still holds the lock then (answered after it, or
        never) or leaves the time set (an answer other than SUCCESS before it). Where neither can
        be, the pool must be empty then. Buffers leave the pool only for new files, each created by
        a writer holding the lock when the last file is full, one at most a hold; the writers that
        may hold the lock until then are those arrived before that answer and not answered by the
        put path before now, and the first of them up to the room left in the last file write
        into it (each writes one message at most), so at most the rest create files. A buffer
        given back only adds to the pool. pool-exhaustion under 4.3.2, seed 6, stopped at such an
        answer: its search had given a buffer back at a back-up 27 ms before, and searched every
        order of the steps between."""
        answers, config = self.answers, self.replay.config
        r = bisect.bisect_left(answers.rejected, k)
        if r == len(answers.rejected) or not s.available_buffers:
            return False
        rejected = answers.rejected[r]
        at, timeout = self.events[rejected]["ts"], config.os_page_cache_busy_timeout_ms
        arrived = bisect.bisect_left(answers.writer_arrivals, rejected)  # the writers arrived before that answer
        if s.now < at - timeout:  # a writer taking the lock now would have it held long enough
            if arrived > bisect.bisect_left(answers.writer_answers, rejected) or answers.stamps_between(k, rejected):
                return False
        if is_os_page_cache_busy(s.lock, at, timeout) and not self._unlocks_clean_before(s, k, rejected):
            return False  # the stamp set now has the store busy then, unless its holder's SUCCESS resets it before
        holding = arrived - bisect.bisect_left(answers.writer_answers, k)
        room = config.mapped_file_size - s.files[-1].wrote if s.files else 0
        return len(s.available_buffers) > holding - room

    def _busy_for_good(self, s: BrokerState, k: int) -> bool:
        """Whether the store is busy now and stays so while a writer's answer past the put check
        is still to come. Only a writer taking the put lock stamps the lock's begin time, and only
        its unlocking (or an exception where ``finally`` resets) clears it; a writer takes the
        lock only after passing the put check, which needs the store not busy. So with the time
        stamped long enough ago, the lock free (or held by the HA service, which never stamps) and
        no worker past the check, no writer passes it again until the stamp is as old as the busy
        bound (10^7 ms): 5.3.3's and 4.3.2's stuck busy after an exception inside the lock. A
        writer's answer other than a refusal ([PC_SYNCHRONIZED] included) is written past the
        check, so none can come before then. faults under 5.3.3, seed 6: send 14 had to pass the
        check at 91 ms, before the stamp an exception left at 90 turned the store busy for good at
        111; the search, which took its steps only as its answer at 132 neared, found out there."""
        lock = s.lock
        if lock.holder not in (None, HA_SERVICE) or not is_os_page_cache_busy(lock, s.now, self.replay.config.os_page_cache_busy_timeout_ms):
            return False
        if any(worker.stage is WorkerStage.PASSED_PUT_CHECK for e in s.executors for worker in e.workers):
            return False
        answers = self.answers
        w = bisect.bisect_left(answers.writer_answers, k)
        return w < len(answers.writer_answers) and self.events[answers.writer_answers[w]]["ts"] - lock.begin_time_in_lock < BUSY_UPPER_BOUND_MS

    def _unlocks_clean_before(self, s: BrokerState, k: int, event: int) -> bool:
        """Whether the put lock's holder is a worker whose request's SUCCESS, which resets the lock's
        begin time as it unlocks, comes from event ``k`` on and before ``event``."""
        holder = s.lock.holder
        if holder is None or holder == HA_SERVICE:
            return False
        worker = s.executor(ExecutorName(holder[0])).workers[holder[1]]
        if not isinstance(worker.task, RequestTask):
            return False
        request = worker.task.request.id
        return request in self.answers.clean and k <= self.answers.at[request] < event

    def _bucket_cannot_throttle(self, s: BrokerState, k: int) -> bool:
        """Whether a topic's bucket cannot write the wait that the next [RateLimit] answer naming
        it gives. With the breaker closed, that answer is a reservation at its millisecond that
        had to wait, and its wait is the bucket's next free ticket less that millisecond: the
        ticket is then known to the microsecond. The ticket only moves forward (a read moves it to
        now when it is behind, a reservation adds the wait it makes), and only admissions move it:
        a bucket whose ticket is already past it, or short of it where the admissions still to
        come (:meth:`_admissions_from`) cannot bring it there (:meth:`_admissions_reach`), cannot
        write it. With the breaker open, a different wait needs
        the breaker to close first, which it does only once the ticket is the open time behind the
        clock (:func:`spec.limiter.circuit_breaker_acquire`)."""
        answers = self.answers
        for b in s.buckets:
            throttled = answers.throttled.get(b.resource)
            if throttled is None:
                continue
            t = bisect.bisect_left(throttled, (k, -1))
            if t == len(throttled):
                continue
            j, wait = throttled[t]
            at = (self.events[j]["ts"] - b.created_at) * 1000  # the answer's millisecond on the bucket's stopwatch
            ticket = b.bucket.next_free_ticket_micros
            if b.bucket.circuit_open:
                if wait != b.bucket.last_need_wait_micros and at - ticket < self.replay.config.rate_limit.circuit_breaker_open_micros:
                    return True
            elif not self._admissions_reach(b, self._admissions_from(s, b, k, j), at, at + wait):
                return True
        return False

    def _admissions_from(self, s: BrokerState, b: Bucket, k: int, until: int) -> tuple[int, ...]:
        """The soonest microsecond, on ``b``'s stopwatch, of each admission its bucket may still
        make between the node explaining ``k`` events and event ``until``, in order: the requests
        for its topic at the rate-limit handler now (from now on), then those arriving before that
        event (from their arrival on); none the trace answers with [RateLimit]."""
        answers = self.answers
        now = (s.now - b.created_at) * 1000
        here = [
            now
            for io in s.io_threads
            if io.stage is IoStage.RECEIVED and io.request is not None and io.request.topic == b.resource and answers.tag.get(io.request.id) != "[RateLimit]"
        ]
        admissible = answers.admissible.get(b.resource, [])
        coming = admissible[bisect.bisect_left(admissible, k) : bisect.bisect_left(admissible, until)]
        return (*here, *((self.events[event]["ts"] - b.created_at) * 1000 for event in coming))

    def _admissions_reach(self, b: Bucket, soonest: tuple[int, ...], at: int, ticket: int) -> bool:
        """Whether admissions at the microseconds ``soonest`` gives at the earliest (each at a
        millisecond no sooner than the one before, none after ``at``; any number of them, the
        first ones first) can bring the bucket's next free ticket to exactly ``ticket``. An
        admission is a reservation that did not wait: its millisecond is at or past the ticket.
        Past a few admissions it only checks that the ticket, which never moves back, is not past
        ``ticket`` and can still move (:data:`_EXACT_ADMISSIONS`)."""
        bucket = b.bucket
        if bucket.next_free_ticket_micros == ticket:
            return True
        if bucket.next_free_ticket_micros > ticket or not soonest:
            return False
        if len(soonest) > _EXACT_ADMISSIONS:
            return True
        key = (bucket, soonest, at, ticket)
        reached = self.reached.get(key)
        if reached is None:
            if len(self.reached) >= _REMEMBERED_QUEUES:
                self.reached.clear()
            tries = [_ADMISSION_TRIES]
            reached = self.reached[key] = _reach(bucket, soonest, at, ticket, tries) or tries[0] <= 0
        return reached

    def _cannot_fill(self, s: BrokerState, k: int) -> bool:
        """Whether a queue that the trace says is full at its executor's next [OVERLOAD] cannot
        be full by then. A queue grows only by a remoting thread's submission: at most by the
        requests for its executor on remoting threads now and those arriving before that answer,
        but those the trace says are refused on the remoting thread ([OVERLOAD], [REJECTREQUEST],
        [RateLimit]: never a task in the queue). Workers and cleaners only shrink it, and they must
        have taken every task the trace answers before the [OVERLOAD]: it is no longer queued
        then, whether it is in the queue now or still to join (:meth:`_may_join`). Where broker
        code submits tasks of its own to the executor (``foreign_tasks``), no bound is read, nor for
        an unbounded queue, never full (the exhaustive search says so) (:attr:`fills`)."""
        for name, overloaded, capacity in self.fills:
            o = bisect.bisect_left(overloaded, k)
            if o == len(overloaded):
                continue
            queue = self._queue(s.executor(name))
            if len(queue.tasks) + self._may_join(s, name, k, overloaded[o]) < capacity:
                return True
            for full_at, staying in queue.full_after:
                if staying + self._may_join(s, name, k, full_at) < capacity:
                    return True
        return False

    def _may_join(self, s: BrokerState, name: ExecutorName, k: int, until: int, but: int = 0) -> int:
        """The most tasks that can join ``name``'s queue from the node explaining ``k`` events until
        event ``until`` and still be in it then: the requests for it on remoting threads now (but
        request ``but``) and those arriving before that event, less those the trace says are
        refused on the remoting thread, and less those it answers before that event (a worker or a
        cleaner took them from the queue by then), and less those that a cleaner takes and that
        cannot join before that event's millisecond (:attr:`_Answers.joins_from`), or that join
        behind a request that arrives after that event (:attr:`_Answers.joins_after`)."""
        answers = self.answers
        ts: int = self.events[until]["ts"] if until < len(self.events) else _NEVER
        held = sum(
            1 for io in s.io_threads if io.request is not None and io.request.id != but and answers.may_be_queued_at(io.request.id, name, until, ts)
        )
        since, coming = self.may_join.get((name, until), (_NEVER, []))
        if k < since:  # read the arrivals from k on, once for every later node
            joining = answers.joining.get(name, [])
            window = joining[bisect.bisect_left(joining, (k, 0)) : bisect.bisect_left(joining, (until, 0))]
            coming = [event for event, request in window if answers.may_be_queued_at(request, name, until, ts)]
            if len(self.may_join) >= _REMEMBERED_QUEUES:
                self.may_join.clear()
            self.may_join[(name, until)] = (k, coming)
        return held + len(coming) - bisect.bisect_left(coming, k)

    def _queue(self, e: Executor) -> _Queue:
        """What :meth:`_no_run_goes_on` reads of ``e``'s queue, read once per queue: a step that
        leaves a queue alone keeps its tuple, so most nodes share their parent's."""
        queue = self.queues.get(id(e.queue))
        if queue is None or queue.tasks is not e.queue or queue.executor is not e.name:  # the empty tuple is every empty queue's
            if len(self.queues) >= _REMEMBERED_QUEUES:
                self.queues.clear()
            queue = self.queues[id(e.queue)] = _Queue(e, self.answers, e.name in self.replay.environment.foreign_tasks)
        return queue

    def _ahead_cannot_leave(self, s: BrokerState, e: Executor, k: int, queue: _Queue) -> bool:
        """Whether more tasks are ahead of a task that a cleaner takes from the head (in the queue,
        or on a remoting thread, to join behind them all) than the executor's workers can take
        before that answer; or, for a task in the queue that a worker answers, more tasks than they
        can take before its answer, itself and those ahead of it. A task leaves the queue by a
        worker's take or by a cleaner's answer; a worker takes one task at a time and takes
        another only once it has answered the one it holds: before an event, the workers take at
        most as many tasks as they have free now, plus the answers they write from now until then
        (:class:`_Queue` sums what depends on the queue alone). Once every worker has started, a
        request a worker answers that is still to join (on a remoting thread, or still to arrive:
        the soonest answered of those) joins behind every task in the queue, and the workers take
        them all and it before its answer. Likewise for a task a cleaner takes that is on a
        remoting thread or is the next such task still to arrive: it joins behind every task in
        the queue, and behind those that must be between it and the task a cleaner takes before it
        (:meth:`_still_between`), and the workers take them all before its answer. Where a request
        the executor runs is never answered, its worker may finish it unseen, so no bound is read."""
        answers = self.answers
        if e.name in answers.silent:
            return False
        free = self.replay.config.executor(e.name).threads - sum(1 for w in e.workers if w.task is not None)
        freed = answers.freed.get(e.name, [])
        spare = free - bisect.bisect_left(freed, k)  # takes available beyond the answers still to come
        if queue.ahead_need is not None and queue.ahead_need > spare:
            return True
        started = len(e.workers) == self.replay.config.executor(e.name).threads  # a task submitted now joins the queue, behind them all

        def cleaned_too_late(request: int) -> bool:
            """Whether the workers cannot take the tasks ahead of ``request``, a task a cleaner takes that is not in the queue yet, before its answer."""
            return queue.waiting + self._still_between(s, queue, request, k) - bisect.bisect_left(freed, answers.at[request]) > spare

        for io in s.io_threads:
            if io.request is not None and answers.executor.get(io.request.id) is e.name:
                request = io.request.id
                if request in answers.behind:
                    if cleaned_too_late(request):
                        return True
                elif started and answers.tag.get(request, "[") in _WRITTEN_BY_A_WORKER:
                    if queue.waiting + 1 - bisect.bisect_left(freed, answers.at[request]) > spare:
                        return True
        cleaned = answers.cleaned_arrivals.get(e.name, [])
        c = bisect.bisect_left(cleaned, (k, 0))
        if c < len(cleaned) and cleaned_too_late(cleaned[c][1]):  # the next still to arrive: it joins behind every task queued now
            return True
        arriving, soonest = answers.served.get(e.name, ((), ()))
        later = bisect.bisect_left(arriving, k)
        return started and later < len(arriving) and queue.waiting + 1 - bisect.bisect_left(freed, soonest[later]) > spare

    def _too_few_behind_next_arrival(self, s: BrokerState, k: int) -> bool:
        """Whether, for the next request still to arrive that a cleaner takes from each queue with
        tasks behind it, too few can join behind it by then. Those are the requests on remoting
        threads now and those arriving before its answer (:meth:`_may_join`, which counts it
        too): every task queued now is ahead of it. The same check as for such a request on a
        remoting thread, read one arrival sooner: a thread freed for its arrival by queueing a
        request that had to join behind it shows here, not once it has arrived."""
        answers = self.answers
        for name in answers.counted_arrivals:
            request = self._next_counted_arrival(name, k)
            if request is not None and self._may_join(s, name, k, answers.at[request]) - 1 < answers.behind[request]:
                return True
        return False

    def _next_counted_arrival(self, name: ExecutorName, k: int) -> int | None:
        """The next request still to arrive from event ``k`` on that a cleaner takes from ``name``'s
        queue with tasks behind it (:attr:`_Answers.counted_arrivals`); None if none, or where
        foreign tasks may join the queue."""
        counted = self.answers.counted_arrivals.get(name, [])
        c = bisect.bisect_left(counted, (k, 0))
        return counted[c][1] if c < len(counted) and name not in self.replay.environment.foreign_tasks else None

    def _behind_cannot_leave(self, s: BrokerState, k: int) -> bool:
        """Whether the workers cannot take, between a cleaner's answer and a later one's, the
        tasks behind the first that no cleaner takes (:attr:`_Answers.drained`): too few of them
        are free at the first answer. A worker that holds a task answered after it is busy then,
        and so is one for each task now in the queue ahead of the cleaned task (the whole queue if
        it has not joined yet: it joins behind them all) that is answered after it, since a worker
        takes such a task before the cleaned task can leave from the head."""
        answers, foreign = self.answers, self.replay.environment.foreign_tasks
        for e in s.executors:
            drained = answers.drained.get(e.name)
            if drained is None or e.name in foreign:
                continue
            d = bisect.bisect_left(drained, (k, 0, 0))
            if d == len(drained):
                continue
            holding = [answers.at.get(w.task.request.id, _NEVER) for w in e.workers if w.task is not None]
            queue = self._queue(e)
            horizon = max(max(holding, default=-1), queue.latest)  # past it, no worker is busy for this state's sake
            threads = self.replay.config.executor(e.name).threads
            for answered, need, cleaned in itertools.islice(drained, d, None):
                if answered >= horizon:
                    break
                ahead = queue.places.get(cleaned, _NEVER)
                busy = sum(1 for at in holding if at > answered) + sum(1 for i, at in queue.answered if i < ahead and at > answered)
                if busy + need > threads:
                    return True
        return False

    def _still_between(self, s: BrokerState, queue: _Queue, request: int, k: int) -> int:
        """How many tasks must still join between ``request``, a task a cleaner takes that is not
        in the queue yet, and the task X a cleaner takes from the queue just before it: what the
        remarks say must be between them (:attr:`_Answers.between`), less the tasks behind X now
        where X is the last task in the queue that a cleaner takes; all of them where X is not in
        the queue yet (on a remoting thread, or still to arrive), since they join behind it; none
        where X has left. None is one a cleaner takes, so workers take them all before
        ``request``'s answer; but the remarks count every element of the queue, and where broker
        code may still submit tasks of its own to it (``foreign_tasks``), as many of those may be
        such tasks, which a worker runs without holding them (faults under 4.3.2, seed 4, whose
        true run this dropped at its 12th event)."""
        x = self.answers.cleaned_before.get(request)
        if x is None:
            return 0
        need = self.answers.between[x].need
        environment = self.replay.environment
        if queue.executor in environment.foreign_tasks:
            need -= max(environment.max_foreign_tasks - s.next_foreign_id + 1, 0)
        if queue.last_cleaned is not None and queue.last_cleaned[0] == x:
            return max(need - queue.last_cleaned[1], 0)
        if self.answers.between[x].arrives >= k or _on_a_remoting_thread(s, x):
            return max(need, 0)
        return 0

    def _arrival_forces_joins(self, s: BrokerState, k: int) -> bool:
        """Whether the next arrival finds no remoting thread free, or frees one only by queueing
        more tasks behind a task a cleaner takes later than its remark counts. A request on a
        remoting thread stays there until the arrival if the trace refuses it on that thread
        after it, or if it cannot join its queue before it (a task a cleaner takes, not created
        yet or behind one that is not: :attr:`_Answers.joins_from`; one that joins behind a
        request that arrives later: :attr:`_Answers.joins_after`); the others leave by
        their refusal, or by joining their queue, where every worker has started."""
        answers = self.answers
        a = bisect.bisect_left(answers.arrival_events, k)
        if a == len(answers.arrival_events):
            return False
        arrival = answers.arrival_events[a]
        ts: int = self.events[arrival]["ts"]
        staying, leaving = 0, 0
        joining: dict[ExecutorName, int] = {}
        for io in s.io_threads:
            if io.request is None:
                continue
            request = io.request.id
            refused = answers.tag.get(request) in _REFUSED_ON_THE_REMOTING_THREAD
            executor = answers.executor.get(request)
            if refused and answers.at[request] > arrival:
                staying += 1
            elif not answers.joins_by(request, arrival, ts):
                staying += 1
            elif refused or executor is None or request not in answers.at:
                leaving += 1
            else:
                joining[executor] = joining.get(executor, 0) + 1
        if staying + 1 > self.replay.config.io_threads:
            return True
        joiners = sum(joining.values())
        must_leave = staying + 1 + leaving + joiners - self.replay.config.io_threads
        for name, count in joining.items():
            must_join = must_leave - leaving - (joiners - count)
            e = s.executor(name)
            if must_join <= 0 or not e.queue or len(e.workers) < self.replay.config.executor(name).threads or name in self.replay.environment.foreign_tasks:
                continue
            if any(answered > arrival and room < must_join for answered, room in self._queue(e).room):
                return True
        return False

    def _threads_force_joins(self, s: BrokerState, e: Executor, k: int, queue: _Queue) -> bool:
        """Whether more tasks must join ``e``'s queue before a cleaner takes a task in it than its
        remark leaves room for behind it. Every task that joins from now on is behind that one
        until it leaves. A request arriving needs a free remoting thread, so at the last arrival
        before that answer at most all threads but one hold a request: of the requests routed to
        ``e`` that can leave their thread only by joining its queue (:attr:`_Answers.joiners`),
        on a thread now or arriving before then, all but so many have joined (less one for each
        worker not started yet, which a dispatch may start with its first task instead). The
        check of the next arrival alone (:meth:`_arrival_forces_joins`) finds this only once the
        threads are full. bursts under 4.3.2, seed 7: send 45 joined behind 43 at 177 ms, and
        the search found out at 213, with seven sends to join behind 43 by 219 and room for six;
        it searched every order of the steps between."""
        answers, config = self.answers, self.replay.config
        joiners = answers.joiners.get(e.name, [])
        held = sum(1 for io in s.io_threads if io.request is not None and answers.executor.get(io.request.id) is e.name and answers.leaves_by_joining(io.request.id))
        free = config.io_threads - 1 + config.executor(e.name).threads - len(e.workers)
        first = bisect.bisect_left(joiners, k)
        for answered, room in queue.room:
            a = bisect.bisect_left(answers.arrival_events, answered) - 1  # the last arrival before that answer
            if a < 0 or answers.arrival_events[a] < k:
                continue
            if held + bisect.bisect_left(joiners, answers.arrival_events[a]) - first - free > room:
                return True
        return False

    def _cleaner_cannot_go_on(self, s: BrokerState, k: int) -> bool:
        """The checks of :meth:`_no_run_goes_on` that read the fast-failure scheduler's fields
        (the only ones a step of :data:`_MOVES_ONLY_THE_CLEANER` can change)."""
        return self._run_cleans_out_of_turn(s, k) or self._no_run_cleans_in_time(s, k)

    def _run_cleans_out_of_turn(self, s: BrokerState, k: int) -> bool:
        """Whether a fast-failure run scanning a queue finds a head past its wait that the trace
        says a cleaner takes, but not at the next cleaner's answer, or with a busy drain: the run
        stops only at a young head, so its next answer is that task's [TIMEOUT_CLEAN_QUEUE] (no
        worker takes a task the trace says a cleaner answers, and the head only ages), and a busy
        drain is written only by a run in its first phase."""
        if s.fast_failure_phase is not FastFailurePhase.CLEANING or not 0 <= s.fast_failure_queue < len(s.queue_waits):
            return False
        queue = s.executor(s.queue_waits[s.fast_failure_queue][0]).queue
        head = queue[0] if queue else None
        if not isinstance(head, RequestTask) or head.stop_run or not is_expired(head, s.now, s.fast_failure_scan_wait):
            return False
        answered = self.answers.at.get(head.request.id) if head.request.id in self.answers.behind else None
        cleaned = self.answers.next_cleaned(k)
        timed_out = self.answers.tag.get(head.request.id) == "[TIMEOUT_CLEAN_QUEUE]"  # the scan's answer; a busy drain is another run's
        return answered is not None and (not timed_out or cleaned is None or cleaned[0] != answered)

    def _no_run_cleans_in_time(self, s: BrokerState, k: int) -> bool:
        """Whether the next cleaner's answer comes before any run can write it. Only a fast-failure
        run writes [PCBUSY_CLEAN_QUEUE] (in its first phase, the busy drain) and
        [TIMEOUT_CLEAN_QUEUE] (in its second, scanning the cleaned queues in their order), at the
        millisecond the trace stamps it. The run in progress can still write it while it drains, or
        while it has yet to pass that answer's queue; otherwise the next run must, which starts no
        sooner than it is due (``fast_failure_next_run``). A run that ended too soon, or passed the
        queue, is dropped here, at once, rather than at that answer after every order of the hidden
        steps between."""
        cleaned = self.answers.next_cleaned(k)
        if cleaned is None or s.fast_failure_phase is FastFailurePhase.DRAINING_BUSY:
            return False
        event, drain, executor = cleaned
        if s.fast_failure_phase is FastFailurePhase.CLEANING and not drain:
            scanned = [name for name, _ in s.queue_waits]
            if executor not in scanned or scanned.index(executor) >= s.fast_failure_queue:
                return False
        return bool(self.events[event]["ts"] < s.fast_failure_next_run)

    def _too_few_between(self, s: BrokerState, k: int) -> bool:
        """Whether too few tasks can still join between a task a cleaner takes and the next one it
        takes from that queue, that one not having joined yet (:meth:`_Answers._read_between`):
        the tasks behind the first now, the requests on remoting threads that may join between,
        and those arriving before the next must have joined. Also for the next such first task
        still to arrive: every task queued now is ahead of it, so the requests between must be
        on remoting threads now or arrive from here on (one that joins its queue before that task
        arrives is lost to it, which otherwise shows only once it has arrived, after every order
        of the steps between)."""
        foreign = self.replay.environment.foreign_tasks
        a = bisect.bisect_left(self.answers.awaited, (k, 0))
        if a < len(self.answers.awaited):
            x = self.answers.awaited[a][1]
            if self.answers.executor[x] not in foreign and self._between_short(s, k, x, 0):
                return True
        for e in s.executors:
            if e.queue and e.name not in foreign:
                last = self._queue(e).last_cleaned
                if last is not None and self._between_short(s, k, *last):
                    return True
        for io in s.io_threads:
            if io.request is not None and io.request.id in self.answers.between and self.answers.executor.get(io.request.id) not in foreign:
                if self._between_short(s, k, io.request.id, 0):
                    return True
        return False

    def _between_short(self, s: BrokerState, k: int, x: int, behind: int) -> bool:
        """Whether fewer tasks than the trace needs can be between task ``x`` (``behind`` tasks
        behind it in its queue now) and the next task a cleaner takes from that queue, where that
        one is not in the queue yet: those behind it, those on remoting threads, those arriving
        before it (from event ``k``) and those arriving after it, before the next must have joined."""
        answers = self.answers
        between = answers.between.get(x)
        if between is None:
            return False
        executor = answers.executor[x]
        if executor is not None and any(isinstance(t, RequestTask) and t.request.id == between.next for t in s.executor(executor).queue):
            return False
        held = sum(
            1
            for io in s.io_threads
            if io.request is not None
            and io.request.id not in (x, between.next)
            and answers.executor.get(io.request.id) is executor
            and answers.may_be_between(io.request.id, x)
        )
        short = between.need - behind - held - len(between.coming) + bisect.bisect_left(between.coming, k)
        if short <= 0 or executor is None or k >= between.arrives:
            return short > 0
        # The requests arriving before it, counted only until there are enough: the next such task
        # may arrive thousands of events on, and this runs at every node.
        joining = answers.joining.get(executor, [])
        for n in range(bisect.bisect_left(joining, (k, 0)), bisect.bisect_left(joining, (between.arrives, 0))):
            if answers.may_be_between(joining[n][1], x):
                short -= 1
                if short == 0:
                    return False
        return True

    def _urgency(self, s: BrokerState, a: Action, k: int) -> int | None:
        """How many events ahead the trace answers the request a hidden step serves (0 for the
        next event's, and for the fast-failure scheduler; :data:`_FIRST` for the commit service's
        while a new file waits for a buffer); None for a step the trace rules out."""
        if isinstance(a, FastFailureEndsBusyDrain):
            drain = self._drain_to_come(s, k)
            return 0 if drain is None else drain - k
        if isinstance(a, FastFailureStopsAtHead):
            clean = self._clean_to_come(s, k, a.queue)
            return 0 if clean is None else clean - k
        if isinstance(a, FastFailureStep):
            return 0
        if isinstance(a, CommitServiceStep) and self._file_waits_for_a_buffer(s):
            return _FIRST  # a new file takes the buffer the commit service can give back first
        request = _request_served(s, a)
        if request is None:
            return _NEVER
        answers = self.answers
        if isinstance(a, DispatchCreatesTask) and request in answers.created_at:
            return 0 if s.now == answers.created_at[request] else None
        answered = answers.due.get(request, _NEVER)
        if type(a) in _PAST_THE_WRITER.get(answers.tag.get(request, ""), ()):
            return None
        if isinstance(a, DispatchCreatesTask) and self._past_its_wait_behind_a_clean(s, request):
            return 1  # created once time has moved on: see the method
        if isinstance(a, (RateLimitHandlerAdmits, DispatchCreatesTask)):
            return 0
        if isinstance(a, DispatchQueuesTask) and answers.tag.get(request) in CLEAN_QUEUE_TAGS and answered > k:
            if self._held_back_now(s, request, k):
                return None
            ahead = [answers.due[x] for x in self.hurried.get(request, ()) if _on_a_remoting_thread(s, x)]
            if ahead:  # an order learned (:meth:`_learn`): it joins when the request it joins before would
                return max(min(ahead) - k, 0)
            return _NEVER - 1  # a task a cleaner answers waits at the head: it joins the queue as late as it can
        if request not in answers.at:
            # The trace never answers it: it moves along just ahead of the request it is due by
            # (the next one routed to its executor that the trace answers, which arrived after it),
            # and no order of the answers holds it back, since nothing says when it joins.
            if not self.strategy.refusals_hurry_the_unanswered:
                answered = answers.due_in_queue.get(request, _NEVER)
            return max(answered - k - 1, 0)
        if self.strategy.queue_order and isinstance(a, (DispatchQueuesTask, DispatchStartsWorker)):
            if self._out_of_order(s, a, request, answered, k):
                return None
        return max(answered - k, 0)

    def _past_its_wait_behind_a_clean(self, s: BrokerState, request: int) -> bool:
        """Whether a task created now for ``request`` would join right behind the queue's tail,
        a task that a [TIMEOUT_CLEAN_QUEUE] takes before the trace answers this one, and be past
        the queue's wait by then. The run that takes that task goes on to the next head, and
        takes it too if it is past its wait, which the trace does not say; created later (its
        remoting thread slow), it may be young then."""
        answers = self.answers
        executor = answers.executor.get(request)
        if executor is None or answers.tag.get(request) in _REFUSED_ON_THE_REMOTING_THREAD:
            return False
        queue = s.executor(executor).queue
        tail = queue[-1] if queue else None
        if not isinstance(tail, RequestTask) or answers.tag.get(tail.request.id) != "[TIMEOUT_CLEAN_QUEUE]":
            return False
        cleaned, answered = answers.at[tail.request.id], answers.at.get(request, _NEVER)
        at: int = self.events[cleaned]["ts"]
        if answered <= cleaned or (answers.tag.get(request) in CLEAN_QUEUE_TAGS and self.events[answered]["ts"] == at):
            return False
        return any(q is executor and s.now + wait <= at for q, wait in s.queue_waits)

    def _file_waits_for_a_buffer(self, s: BrokerState) -> bool:
        """Whether a put holding the lock needs a new file while the pool is empty. Created now,
        the file writes to the mmap; created once the commit service has committed a full file
        and returned its buffer, it writes to that buffer. No event shows which until the pool
        refuses a send or serves one later. The search tries the commit service's steps first,
        since a file on the mmap is the guess that more often ends in a dead end many events on
        (pool-exhaustion under 4.3.2 and 4.9.8)."""
        return not s.available_buffers and not current_file_has_room(s.files, self.replay.config.mapped_file_size) and any(
            w.stage is WorkerStage.IN_PUT_LOCK for e in s.executors for w in e.workers
        )

    def _drain_to_come(self, s: BrokerState, k: int) -> int | None:
        """The event of the next cleaner's answer where it is a busy drain that a run draining now
        can write by waiting: the store is not busy yet but turns busy by then, with the lock held
        as it is, and it comes before the run after the next is due (a run that ends its drain now
        finds the store not busy; the trace says a drain comes, and the next run may come too late
        for it; a drain many runs away is left to them, since a run that keeps draining keeps
        every run after it from starting); None otherwise."""
        busy_at = self._busy_at(s)
        cleaned = self.answers.next_cleaned(k)
        if busy_at is None or not s.now < busy_at or cleaned is None or not cleaned[1]:
            return None
        drained: int = self.events[cleaned[0]]["ts"]
        return cleaned[0] if busy_at <= drained < s.fast_failure_next_run + self.replay.config.fast_failure_period_ms else None

    def _busy_at(self, s: BrokerState) -> int | None:
        """The millisecond from which the store is busy with the put lock held as it is
        (``isOSPageCacheBusy``: ``timeout < now - beginTimeInLock``); None while it is free."""
        if s.lock.begin_time_in_lock == 0:
            return None
        return s.lock.begin_time_in_lock + self.replay.config.os_page_cache_busy_timeout_ms + 1

    def _clean_to_come(self, s: BrokerState, k: int, queue: ExecutorName) -> int | None:
        """The event of the next cleaner's answer where it takes a task past its wait from this
        queue before the next run is due: a run scanning the queue now may stop at a young head
        later (its thread runs on when it will), and only by staying can it write that answer
        (a run stopped now leaves it to the next, too late); None otherwise."""
        cleaned = self.answers.next_cleaned(k)
        if cleaned is None or cleaned[1] or cleaned[2] is not queue:
            return None
        return cleaned[0] if self.events[cleaned[0]]["ts"] < s.fast_failure_next_run else None

    def _run_waits_until(self, s: BrokerState, k: int, before: int) -> int | None:
        """When a due fast-failure run is better started: the millisecond the store turns busy,
        where the next cleaner's answer is a busy drain that comes after it and before the run
        after this one is due, and the store is not busy yet (a run on time would find nothing to
        drain, and the next comes too late: :meth:`_drain_to_come`, the due run's next start being
        this one's); None where the run starts now."""
        due = self.replay.clock_guard_due(s)
        busy_at = self._busy_at(s)
        if due is None or due > s.now or busy_at is None or not s.now < before or self._drain_to_come(s, k) is None:
            return None
        return min(busy_at, before)

    def _lock_due(self, s: BrokerState, k: int, until: int) -> int | None:
        """The last millisecond at which a writer can take the put lock and have held it long
        enough for the next answer that needs it held long (``isOSPageCacheBusy``: ``timeout <
        now - beginTimeInLock``), or for the next that surely does (with the transient store pool
        enabled, a [REJECTREQUEST] may be the pool's deficiency instead, and the last millisecond
        for it may have passed while the lock is still due for a [PCBUSY_CLEAN_QUEUE] after it),
        where the clock's next step, to ``until``, passes it; else None."""
        for busy in (self.answers.lock_busy, self.answers.lock_surely_busy):
            b = bisect.bisect_left(busy, k)
            if b < len(busy):
                last: int = self.events[busy[b]]["ts"] - self.replay.config.os_page_cache_busy_timeout_ms - 1
                if s.now <= last < until:
                    return last
        return None

    def _takes_the_lock(self, s: BrokerState, a: Action, k: int) -> bool:
        """Whether ``a`` is a step to the put lock of the send that holds it at the next answer
        needing it held long (:meth:`_holds_the_lock_when_busy`); in the focused strategies also
        the step that gives that send a worker (its take from the queue, or the dispatch that
        starts a worker for it), without which a send still queued cannot reach the lock in time,
        and a worker's take of a task ahead of it in the queue (workers take only the head)."""
        if not isinstance(a, self.lock_steps):
            return False
        request = _request_served(s, a)
        if request is None:
            return False
        if self._holds_the_lock_when_busy(request, self.answers.at.get(request, _NEVER), k):
            return True
        if isinstance(a, WorkerTakesTask):
            behind = s.executor(a.executor).queue[1:]
            return any(isinstance(t, RequestTask) and self._holds_the_lock_when_busy(t.request.id, self.answers.at.get(t.request.id, _NEVER), k) for t in behind)
        return False

    def _holds_the_lock_when_busy(self, request: int, answered: int, k: int) -> bool:
        """Whether the trace says this send holds the put lock when the store is next found busy:
        the next answer of the send workers is its own, and an answer of flow control that needs
        the lock held long ([REJECTREQUEST], [PC_SYNCHRONIZED], [PCBUSY_CLEAN_QUEUE]) comes
        before it. The lock is one, and the writers answer in the order they held it, so this
        writer holds it then; the earlier it takes it, the longer it has held it. Taken when the
        trace needs it (its own answer), the lock is found held too briefly at the busy answer, and
        the search backed up over every event since to find where the lock was taken."""
        busy = self.answers.lock_busy
        b = bisect.bisect_left(busy, k)
        if b == len(busy) or busy[b] > answered:
            return False
        writers = self.answers.by_workers.get(ExecutorName.SEND, [])
        w = bisect.bisect_left(writers, (k, -1))
        return w < len(writers) and writers[w][1] == request

    def _out_of_order(self, s: BrokerState, a: IoThreadStep, request: int, answered: int, k: int) -> bool:
        """Whether handing this task to its executor now would put it ahead of one the trace
        answers first: another remoting thread holds a request for the same executor that its
        workers answer earlier, and that request can move on now (its queue not full, the store
        not refusing it, no arrival it must wait for). A request the trace never answers is
        answered at no event, so none waits for it (its :attr:`_Answers.due` only times its own
        steps). Or, for a task a cleaner answers at the
        head of the send queue, a send its workers answer before is not yet in the queue or on a
        worker."""
        own = s.io_threads[a.io_thread].request
        executor = None if own is None else route(self.replay.config, own.code)
        if isinstance(a, DispatchQueuesTask) and self._held_back_now(s, request, k):
            return True
        one_thread = executor is not None and self.replay.config.executor(executor).threads == 1
        for io in s.io_threads:
            if io.request is None or io.request.id == request:
                continue
            other = io.request.id
            earlier = (self.strategy.any_executor or route(self.replay.config, io.request.code) is executor) and other in self.answers.at and self.answers.due[other] < answered and self.answers.tag.get(other) not in _PAST_THE_WRITER
            if earlier and not one_thread and self._answered_in_one_millisecond(other, request):
                continue  # two workers' answers in one millisecond may come in either order, whatever order their tasks joined in
            if earlier and not self._waits_for_room(s, io) and not self._waits_for_the_store(s, io) and not self._waits_for_arrival(s, io, k):
                return True
        cleaned = self.answers.tag.get(request) in CLEAN_QUEUE_TAGS and executor is ExecutorName.SEND
        if isinstance(a, DispatchQueuesTask) and executor is not None and (one_thread or cleaned):
            target = s.executor(executor)
            ahead = {w.task.request.id for w in target.workers if w.task is not None}
            ahead |= {t.request.id for t in target.queue if isinstance(t, RequestTask)}
            by_workers = self.answers.by_workers.get(executor, [])
            for i, other in itertools.islice(by_workers, bisect.bisect_left(by_workers, (k, -1)), None):
                if i >= answered:
                    break
                if other not in ahead:
                    return True
        return False

    def _answered_in_one_millisecond(self, x: int, y: int) -> bool:
        """Whether the trace answers both requests in the same millisecond. retry-storm-limited
        under 5.3.3, seed 9: send-backs 1185 and 1186, both answered SUCCESS at 861 ms, 1185 first,
        by the send executor's two workers; 1186 had joined the queue first, and with the queue
        order guessed from the answers' order no strategy let it (stuck at seq 2,353)."""
        at = self.answers.at
        return x in at and y in at and self.read[at[x]].ts == self.read[at[y]].ts

    def _held_back_now(self, s: BrokerState, request: int, k: int) -> bool:
        """Whether an order learned (:meth:`_learn`) keeps this request off its queue now: one
        it joins after is still to arrive, or is on a remoting thread and can move on (its queue
        not full, the store not refusing it)."""
        held_back = self.held_back.get(request, ())
        if not held_back:
            return False
        if any(self.answers.arrival_events[other - 1] >= k for other in held_back):
            return True
        return any(io.request is not None and io.request.id in held_back and not self._waits_for_room(s, io) and not self._waits_for_the_store(s, io) for io in s.io_threads)

    def _waits_for_arrival(self, s: BrokerState, io: IoThread, k: int) -> bool:
        """Whether a remoting thread's request must stay off its queue until the next request a
        cleaner takes from it arrives (:meth:`_too_few_behind_next_arrival`): queued now, it
        would leave too few that can join behind that one. No task need wait for it to join first."""
        answers = self.answers
        name = None if io.request is None else answers.executor.get(io.request.id)
        request = None if name is None else self._next_counted_arrival(name, k)
        if io.request is None or name is None or request is None:
            return False
        until = answers.at[request]
        if not answers.may_be_queued_at(io.request.id, name, until, self.events[until]["ts"]):
            return False  # not counted among those that may join behind it (:meth:`_may_join`)
        return self._may_join(s, name, k, until) - 2 < answers.behind[request]

    def _waits_for_the_store(self, s: BrokerState, io: IoThread) -> bool:
        """Whether a remoting thread's request waits for the store: its processor would refuse it
        now (``rejectRequest``: the store busy or the pool deficient). For a request the trace
        answers otherwise (the caller passes over those it refuses on their thread), its dispatch
        cannot create its task until a put unlocks or the commit service returns a buffer: no
        task need wait for it to join first."""
        request = request_to_dispatch(self.replay.config, io)
        return request is not None and reject_request(self.replay.config, s, request.code)

    def _waits_for_room(self, s: BrokerState, io: IoThread) -> bool:
        """Whether a remoting thread's task waits for room in its executor's full queue, where
        its dispatch cannot move until a worker or a cleaner takes a task: no task need wait
        for it to join first."""
        if io.stage is not IoStage.TASK_CREATED or io.request is None:
            return False
        name = route(self.replay.config, io.request.code)
        return name is not None and queue_full(self.replay.config, s, name)


class _Queue:
    """What the trace says of one queue's tasks, for :meth:`_Search._no_run_goes_on`: whether
    their order or a cleaner's count already contradicts it, and how many more tasks must still
    join. Never changed once built; a plain class, for the reason :class:`_Event` gives.

    A task a cleaner answers at event ``answered``, with ``behind`` tasks behind it now and the
    remark counting ``counted``, needs ``counted - behind`` more to join before that answer: at
    most the requests on remoting threads (``held``) and those arriving from event ``k`` until
    then, ``coming = arrived(answered) - arrived(k)`` (:data:`_Answers.arrivals`, counted by
    bisection). The parts that depend on the queue alone are summed here, so that a node checks
    ``held - arrived(k) >= short`` once for the whole queue, ``short`` being the largest
    ``counted - behind - arrived(answered)``.

    Likewise for the tasks ahead of a cleaned one, which only workers take
    (:meth:`_Search._ahead_cannot_leave`): ``ahead - freed(answered) > free - freed(k)`` is checked
    once, with ``ahead_need`` the largest ``ahead - freed(answered)`` (:data:`_Answers.freed`);
    and for a task a worker answers, which a worker takes after every task ahead of it that no
    cleaner takes (``ahead`` counts it too); ``waiting`` counts every task a worker must take,
    ahead of a request still to join."""

    def __init__(self, e: Executor, answers: _Answers, foreign: bool) -> None:
        self.tasks = e.queue  # the queue read (kept: its identity is the cache's key)
        self.executor = e.name
        self.contradicted = False  # a task ahead of one a cleaner takes is answered after it, or more tasks are behind it than counted
        self.short: int | None = None  # see above; None when no cleaner's count bounds the tasks to come (or foreign tasks may join)
        self.left = -1  # the latest answer of a task in the queue that a cleaner takes
        self.ahead_need: int | None = None  # see above; None when no task in the queue is answered
        self.waiting = 0  # the request tasks in the queue that no cleaner takes
        self.last_cleaned: tuple[int, int] | None = None  # the last task in the queue that a cleaner takes, and the tasks behind it
        self.room: list[tuple[int, int]] = []  # for each task in the queue that a cleaner takes: its answer, and how many tasks may still join behind it by then
        #: (event, most tasks): at the first [OVERLOAD] of the executor after the answer of a task
        #: in the queue, at most so many of its tasks are still queued: that one has left, and
        #: every task ahead of it, since workers and cleaners take from the head
        self.full_after: list[tuple[int, int]] = []
        self.answered: list[tuple[int, int]] = []  # (place, answer) of each request task in the queue that no cleaner takes
        self.places: dict[int, int] = {}  # each request task in the queue that a cleaner takes -> its place
        self.latest = -1  # the latest answer among :attr:`answered`
        overloaded = [] if foreign else answers.overloaded.get(e.name, [])
        leaving = sorted((answers.at[t.request.id], i) for i, t in enumerate(e.queue) if isinstance(t, RequestTask) and t.request.id in answers.at) if overloaded else []
        front = -1  # the place of the last task that has left by then
        for at, i in leaving:
            o = bisect.bisect_right(overloaded, at)
            if o == len(overloaded):
                break
            front = max(front, i)
            if self.full_after and self.full_after[-1][0] == overloaded[o]:
                self.full_after.pop()
            self.full_after.append((overloaded[o], len(e.queue) - front - 1))
        arrivals = answers.arrivals.get(e.name, [])
        freed = answers.freed.get(e.name, [])
        joins = 0  # how many tasks join the queue before the last cleaned task ahead is taken
        for i, task in enumerate(e.queue):
            if not isinstance(task, RequestTask):
                continue
            request = task.request.id
            answered = answers.at.get(request)
            if request in answers.behind:
                self.places[request] = i
            else:
                self.answered.append((i, _NEVER if answered is None else answered))
                self.latest = max(self.latest, self.answered[-1][1])
            if answered is not None and answered < self.left:
                self.contradicted = True
                return
            counted = answers.behind.get(request)
            if counted is None:
                self.waiting += 1
                if answered is not None and answers.tag[request] in _WRITTEN_BY_A_WORKER:  # a worker takes it, after every task ahead
                    need = self.waiting - bisect.bisect_left(freed, answered)
                    self.ahead_need = need if self.ahead_need is None else max(self.ahead_need, need)
            elif answered is not None:  # a cleaner's remark: its answer
                behind = len(e.queue) - i - 1
                if behind > counted or counted - behind < joins:
                    self.contradicted = True
                    return
                joins = counted - behind
                self.last_cleaned = (request, behind)
                self.room.append((answered, counted - behind))
                if not foreign:
                    short = counted - behind - bisect.bisect_left(arrivals, answered)
                    self.short = short if self.short is None else max(self.short, short)
                need = self.waiting - bisect.bisect_left(freed, answered)
                self.ahead_need = need if self.ahead_need is None else max(self.ahead_need, need)
                self.left = max(self.left, answered)


#: How many queues :meth:`_Search._queue` keeps read before it starts afresh (memory, not soundness).
_REMEMBERED_QUEUES = 4_096
#: :meth:`_Search._admissions_reach` tries the milliseconds of at most this many admissions, and
#: at most this many reservations in all for one question, before it says "maybe".
_EXACT_ADMISSIONS = 6
_ADMISSION_TRIES = 2_000


def _reach(bucket: TokenBucket, soonest: tuple[int, ...], at: int, ticket: int, tries: list[int]) -> bool:
    """:meth:`_Search._admissions_reach`, by trying each millisecond for the next admission, the
    soonest first, while ``tries[0]`` (decremented by each reservation) lasts."""
    if bucket.next_free_ticket_micros == ticket:
        return True
    if bucket.next_free_ticket_micros > ticket or not soonest:
        return False
    first = max(soonest[0], bucket.next_free_ticket_micros + (-bucket.next_free_ticket_micros) % 1000)
    for micros in range(first, at + 1, 1000):
        if tries[0] <= 0:
            return False
        tries[0] -= 1
        _, after = reserve_and_get_wait_length(bucket, 1, micros)
        if _reach(after, tuple(max(micros, m) for m in soonest[1:]), at, ticket, tries):
            return True
    return False


class _Visited:
    """The nodes searched lately, so that a node met again is not searched again.

    A node is kept by the events it explains and its clock, and hashed only once a second node
    has the same two: the search mostly goes forward, most nodes are alone with theirs, and
    hashing a state is much of a step's cost. Nodes more than :data:`_REMEMBERED_EVENTS` events
    behind the deepest node are forgotten, so that memory does not grow with the trace. Forgetting
    costs only time, never soundness: this set only prunes repeats (a node searched again finds
    what it found before), and what the search returns is still a path of enabled steps checked
    event by event."""

    def __init__(self) -> None:
        self.by_events: dict[int, dict[int, BrokerState | set[BrokerState]]] = {}  # events explained -> clock -> node(s)
        self.floor = 0  # nodes explaining fewer events are forgotten
        self.held = 0  # the nodes remembered now

    def first_time(self, s: BrokerState, k: int) -> bool:
        """Whether the node (``s``, ``k``) was not met before (as far as remembered); it is now."""
        if k < self.floor:
            return True
        floor = k - _REMEMBERED_EVENTS
        while self.floor < floor:
            forgotten = self.by_events.pop(self.floor, {})
            self.held -= sum(len(met) if isinstance(met, set) else 1 for met in forgotten.values())
            self.floor += 1
        clocks = self.by_events.setdefault(k, {})
        met = clocks.get(s.now)
        if met is None:
            clocks[s.now] = s
        else:
            if not isinstance(met, set):
                met = clocks[s.now] = {met}
            if s in met:
                return False
            met.add(s)
        self.held += 1
        return True


#: How far behind the deepest node the search remembers the nodes it searched, in events explained.
_REMEMBERED_EVENTS = 1_000


def _soonest_from(arrivals: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """(event, answer) of requests in the order they arrive, as the events at which they arrive
    and, for each, the soonest answer of those arriving from it on (read by :func:`_answered_before`)."""
    soonest = list(itertools.accumulate(reversed([at for _, at in arrivals]), min))[::-1]
    return [event for event, _ in arrivals], soonest


def _answered_before(arrivals: tuple[list[int], list[int]] | None, k: int, answer: int) -> bool:
    """Whether a request of ``arrivals`` (:func:`_soonest_from`) still to arrive at event ``k`` is
    answered before event ``answer``."""
    if arrivals is None:
        return False
    arriving, soonest = arrivals
    later = bisect.bisect_left(arriving, k)
    return later < len(arriving) and soonest[later] < answer


def _on_a_remoting_thread(s: BrokerState, request: int) -> bool:
    """Whether a remoting thread holds ``request``."""
    return any(io.request is not None and io.request.id == request for io in s.io_threads)


def _request_served(s: BrokerState, a: Action) -> int | None:
    """The request (the spec's id) a thread's step works on: the remoting thread's, the worker's,
    or for an idle worker the queue head it would take."""
    if isinstance(a, IoThreadStep):
        request = s.io_threads[a.io_thread].request
        return None if request is None else request.id
    if isinstance(a, WorkerStep):
        executor = s.executor(a.executor)
        worker = executor.workers[a.worker] if a.worker < len(executor.workers) else None
        if worker is not None and worker.task is not None:
            return worker.task.request.id
        head = executor.queue[0] if executor.queue else None
        return head.request.id if isinstance(head, RequestTask) else None
    return None


def find_witness(
    replay: PartialReplay, events: Sequence[Mapping[str, Any]], passes: int = 1, until: tuple[int, float] | None = None
) -> PartialResult | str:
    """A conformant result with its witness, found by the strategies from ``replay``'s initial
    state within the witness-first share of its budgets (or, given ``until``, by that many spec
    steps in all and that :func:`time.monotonic`); or why none was found.

    The share is spent in two rounds. A strategy whose guesses fit the trace finds its run in a
    few spec steps an event, and the others stall early. So in the first round the strategies
    race (:func:`_race`) for the share, together for at most :data:`_FIRST_TRY_STEPS` spec steps
    an event each (shared: the leader may take what the others leave), backing up by whole events
    when stuck (:data:`_PATIENCE`). In the second round the
    strategies whose search stopped on a budget take what is left in turn, backing up one choice
    at a time: the one that explained the most events in the first round goes first, as the
    likeliest to fit, with half of it, and the others share the rest. A strategy that searched
    everything it tries and found no run is not tried again. ``passes``: this search and the
    later ones that share what is left (:func:`traces.checking.partial._replay_partial`'s passes
    over environments), each of which keeps an equal part of it for its second round."""
    answers = _Answers.read(replay.config, events)
    read = [_Event(record) for record in events]
    if until is None:
        share = replay.budgets.share(replay.header.observation)
        until = (replay.steps + int(replay.budgets.steps * share), time.monotonic() + replay.budgets.seconds * share)
    steps_end, deadline = until
    stopped: dict[Strategy, tuple[int, str]] = {}  # each strategy's furthest try: events explained, why it stopped
    tried = list(STRATEGIES)
    replay.deadline = deadline
    replay.deadline_seconds = max(deadline - time.monotonic(), 0.0)
    orders = _Orders()
    searches = [_Search(replay, events, read, answers, strategy, _PATIENCE, orders) for strategy in STRATEGIES]
    found = _race(searches, _FIRST_TRY_STEPS * max(len(events), 1) * len(searches), steps_end)
    replay.shared_by = ""  # the second round's strategies take their shares in turn
    if isinstance(found, PartialResult):
        return found
    for search, why in zip(searches, found):
        stopped[search.strategy] = (search.deepest, why)
        if search.searched_all:
            tried.remove(search.strategy)
    steps_end = replay.steps + (steps_end - replay.steps) // passes  # the later passes keep their part of what is left
    deadline = time.monotonic() + max(deadline - time.monotonic(), 0.0) / passes
    tried.sort(key=lambda strategy: -stopped[strategy][0])  # the furthest first (ties in their order)
    orders.tried.clear()  # an order one strategy dropped may take another past (_Orders)
    for i, strategy in enumerate(tried):
        part = 2 if i == 0 and len(tried) > 1 else len(tried) - i  # the furthest takes half, the others share the rest
        replay.step_share = max(steps_end - replay.steps, 0) // part
        replay.step_limit = replay.steps + replay.step_share
        replay.deadline_seconds = max(deadline - time.monotonic(), 0.0) / part
        replay.deadline = time.monotonic() + replay.deadline_seconds
        search = _Search(replay, events, read, answers, strategy, orders=orders)
        again = search.run()
        if isinstance(again, PartialResult):
            return dataclasses.replace(again, search=f"witness-first search ({strategy.name})")
        assert again is not None  # no turn: it ran until it found a run or stopped
        if search.deepest >= stopped[strategy][0]:
            stopped[strategy] = (search.deepest, again)  # a second try cut short must not hide how far the first got
    return "the witness-first search found no run (" + "; ".join(why for _, why in stopped.values()) + ")"


def _race(searches: Sequence[_Search], allowance: int, steps_end: int) -> PartialResult | list[str]:
    """The first round: the searches take turns of :data:`_TURN` spec steps, each resumed where
    it paused, until one finds a run (its result) or each has stopped (why each did). A search
    keeps the turn while it explains events at the pace of a strategy that fits the trace (one
    event in :data:`_PACE` spec steps or fewer over its turn); when it falls behind, the turn goes
    to the next search not started yet, or once all have started, to the one that would explain
    the rest of the trace in the fewest spec steps at its pace so far (:meth:`_Search.steps_to_go`).
    So the strategy that fits runs almost alone, one that stalls gives way without losing what it
    searched, and one stalled long falls behind one that moves slowly. ``allowance``: the spec
    steps the searches may take in all, shared, not each's own: a search that leads takes what the
    stalled ones leave, where an allowance of its own stopped it and let the stalled ones spend
    theirs (slow-disk's "answer order" was 860 events from the end, about 35,000 spec steps at its
    pace, when it ran out, and the others took 355,000 before the second round began it again);
    ``steps_end``: the replay's spec steps at which the race ends."""
    replay = searches[0].replay
    # Every spec step of the race is one of its searches', so one limit holds for all their turns.
    replay.step_limit = min(replay.steps + allowance, steps_end)
    # what the searches may take in all, for the message
    replay.step_share, replay.shared_by = replay.step_limit - replay.steps, ", shared by the first round's strategies"
    why: dict[int, str] = {}  # each stopped search's place among them -> why it stopped
    turn = 0  # whose turn it is
    try:
        while len(why) < len(searches):
            search = searches[turn]
            taken, explained = replay.steps, search.deepest
            found = search.run(_TURN)
            if isinstance(found, PartialResult):
                return dataclasses.replace(found, search=f"witness-first search ({search.strategy.name})")
            if found is not None:
                why[turn] = found
            elif (search.deepest - explained) * _PACE >= replay.steps - taken:
                continue  # it kept the pace: its turn again
            waiting = [i for i in range(len(searches)) if i not in why]
            fresh = [i for i in waiting if searches[i].used == 0]
            if fresh:
                turn = fresh[0]
            elif waiting:
                turn = min(waiting, key=lambda i: (searches[i].steps_to_go(), i))
        return [why[i] for i in range(len(searches))]
    finally:
        for search in searches:
            search.close()  # those still paused


#: The first round's try of each strategy, in spec steps an event, shared in the race
#: (:func:`_race`): the survey's runs took 1–10.
_FIRST_TRY_STEPS = 32

#: The orders :meth:`_Search._learn` tries where a search is stuck: on the survey's recordings
#: the one that took it past was the first or the second tried.
_ORDERS_TRIED = 3

#: How many events after the one a search is stuck at the answer that an order
#: :meth:`_Search._learn` tries turns on may come (:meth:`_Search._orders_to_try` says whose
#: answer for each kind): an order shows at
#: that answer, or where the remarks' counts stop fitting a few events before it (0 to 8 on the
#: survey's recordings; the orders of tasks answered long after never took a search past).
_ORDER_SHOWS_WITHIN = 16

#: ... or how many before it: seed 1 of retry-storm under 4.3.2 was stuck 3 events after the
#: answer of the task a cleaner takes that should have joined first (those answered 11 or more
#: events before, on the first two seeds' recordings, took no search past).
_ORDER_SHOWN_BEFORE = 4

#: In the second round, where none of those took the search past, the orders of the first kind
#: turning on an answer up to this many events before the one it is stuck at are tried, at most
#: :data:`_ORDERS_TRIED_FURTHER` of them (:meth:`_Search._learn`): many-topics under 5.3.3, seed
#: 2, was stuck 16 events after the answer of the task a cleaner takes that should have joined
#: first, and the order it needed was the fourth of these.
_ORDER_SHOWN_LONG_BEFORE = 16
_ORDERS_TRIED_FURTHER = 8

#: A turn of the first round's race, in spec steps (:func:`_race`).
_TURN = 2_000

#: The pace at which a strategy keeps its turn in the race, in spec steps an event: one that fits
#: the trace takes 1–10 (the survey's runs), the bench's long traces 8–12 (measured alone).
_PACE = 16

#: In the first round, the spec steps a strategy may take without explaining a new event before
#: it backs up by whole events (:meth:`_Search._back_up`), the second round backing up one choice
#: at a time; in both, before it tries an order it learns (:meth:`_Search._learn`), and each such
#: order's try has as many, besides :data:`_PACE` an event to where it was stuck.
_PATIENCE = 2_000
