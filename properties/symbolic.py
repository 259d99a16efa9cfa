"""Symbolic checks: CrossHair searches every contract of the spec for a counterexample.

Run ``python -m properties.symbolic`` (``make symbolic``, part of ``make test``). Each function that
carries a PEP 316 contract (``pre:``/``post:`` lines in its docstring) is analysed by its own
``crosshair check --analysis_kind=PEP316 --per_condition_timeout=T`` process, two at a time;
one line per function gives its verdict, then a summary line with the elapsed time. The exit
status is non-zero when CrossHair reports a counterexample or an error, when no input met a
precondition (the contract would hold vacuously; such a function is tried once more with four
times the time, :func:`analyse`), or when the overall budget runs out.

Verdicts: *proved* (every condition confirmed over all paths), *no counterexample* (the
per-condition CPU time ran out first: a bounded search, not a proof), and the failures
*COUNTEREXAMPLE*, *VACUOUS* and *ERROR*.

What is covered
---------------
1. **Component contracts**, in the modules the actions delegate their lock and pool logic to:
   :mod:`spec.putlock` (is_os_page_cache_busy, acquire_for_put, release_after_put,
   throw_inside_lock, acquire_for_ha, release_for_ha), :mod:`spec.storepool`
   (remain_transient_store_buffer_nums, is_transient_store_pool_deficient, borrow_buffer,
   return_buffer, create_mapped_file, append_message, commit_file, return_committed_buffer) and
   :mod:`spec.fastfailure` (is_expired). Each says what one transition of the lock or the pool
   does; ``throw_inside_lock``'s contract is conditional on ``reset_in_finally`` on purpose.

2. **Action contracts**, the ``check_<action>`` functions below, one for each action whose
   effect changes the put lock, the pool or a queue under fast failure: workers.WorkerAcquiresPutLock,
   workers.WorkerAppendsAndUnlocks, workers.WorkerThrowsInsideLock, environment.HaServiceAcquiresPutLock,
   environment.HaServiceReleasesPutLock (on a :class:`LockFrame`), workers.WorkerCreatesMappedFile,
   commitservice.CommitServiceCommits and commitservice.CommitServiceReturnsBuffer (on a :class:`PoolFrame`),
   workers.WorkerTakesTask and the six fast-failure actions but FastFailureDropsForeignElement (on a
   :class:`QueueFrame`), and remoting.RequestArrives and the five dispatch actions of a routed request
   (on a :class:`DispatchFrame`). Each contract reads: *given every state
   claim, the lemma* :func:`begin_time_is_set_only_by_a_writer` *and the action's guard, after
   the step every state claim and the lemma hold and no transition claim breaks*. Guard, step
   and claims are the spec's own (:func:`spec.machine.enabled`, :func:`spec.machine.step`,
   ``broken_state_claims`` and ``broken_transition_claims`` of :mod:`spec.invariants`), applied
   to a whole :class:`BrokerState` of a small broker (the send executor with two workers, one
   remoting thread, profile :data:`FRAME_PROFILE`). CrossHair chooses the frame:

   - :class:`LockFrame`: the clock, the lock's holder and beginTimeInLock, and both workers'
     stages; its contracts carry ``begin_time_is_zero_when_lock_is_free``
     (⇔ ``putlock.begin_time_is_zero_when_free``) and ``at_most_one_writer_holds_the_put_lock``.
     On an idle machine each is proved over all paths in 2–3 s of CPU; under load the
     per-condition time may run out first (*no counterexample*).
   - :class:`PoolFrame`: whether the pool is enabled, the file size, up to two live files
     (positions and whether each holds a buffer) and up to two spare buffers; its contracts
     carry ``lent_and_available_buffers_partition_the_pool``
     (⇔ ``storepool.buffers_partition_the_pool``) and
     ``pool_is_deficient_exactly_when_none_is_available``. Positions and the file size are
     unbounded integers, so these end as *no counterexample*.
   - :class:`QueueFrame`: the clock, worker 0's lock stamp (busy or not), up to two queued
     send tasks with their stamps, and the scheduler's phase, next slot, scan wait, queue wait
     and switch; its contracts carry ``every_request_is_in_exactly_one_place``,
     ``cancelled_task_never_runs``, ``timeout_answers_only_after_the_queue_wait`` and
     ``pcbusy_answers_only_while_busy``.
   - :class:`DispatchFrame`: the clock, worker 0's lock stamp, how many send threads exist, how
     many tasks are queued (capacity two), and the remoting thread's stage, oneway flag and
     stamp; its contracts carry ``no_queue_exceeds_its_capacity``,
     ``reject_request_answers_only_while_busy_or_deficient``,
     ``overload_answers_only_when_the_queue_is_full`` and
     ``responses_carry_the_profile_code_and_remark``.

   The remaining state claims (requests, queues, responses) are evaluated too, on the frames'
   fixed part: nothing queued, and each worker's request placed consistently with its stage.
   workers.WorkerAppendsAndUnlocks is checked on the lock frame only; its append is covered by
   ``append_message``'s contract and moves no buffer. workers.WorkerThrowsInsideLock also requires that
   the profile resets beginTimeInLock in ``finally``: in every other profile the step breaks
   ``begin_time_is_zero_when_lock_is_free``, the stuck-busy bug the spec exists to show
   (``tests/planted/stuck_lock.py`` drops that precondition on profile 5.3.3, and CrossHair
   finds it).

What is left to Hypothesis and the explorer
-------------------------------------------
Sequences of steps (reachability, the "sometimes" and "eventually" claims, and whether a frame
state is reachable at all), the other profiles for the action contracts, pools larger than the
pool frame's, queues longer than two, and the 14 actions without an action contract: the
rate-limit handler's three, DispatchAnswersNotSupported (no default processor), the put
pre-check and non-put processing, WorkerDiscardsCancelledTask, WorkerRunsForeignTask,
FastFailureDropsForeignElement, the clock, the operator's two and internal submissions. CrossHair is reliable on one step over small frozen data and
unreliable on small budgets for more (measured while writing these checks: longer paths time out).
"""

from __future__ import annotations

import argparse
import enum
import importlib
import importlib.metadata
import inspect
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from spec import commitservice, environment, fastfailure, remoting, workers
from spec.actors import Action
from spec.codes import RequestCode, ResponseCode, ResponseKind
from spec.config import BrokerConfig, broker_config
from spec.frozen import record
from spec.invariants import broken_monitors, broken_state_claims
from spec.machine import enabled, step
from spec.profiles import ExecutorName, Profile
from spec.releases import PROFILES
from spec.putlock import FREE_LOCK, HA_SERVICE, Holder, PutLock, acquire_for_put
from spec.state import (
    BrokerState,
    Executor,
    FastFailurePhase,
    initial_state,
    IoStage,
    IoThread,
    MappedFile,
    Next,
    Request,
    RequestTask,
    Response,
    Worker,
    WorkerStage,
)
from spec.workers import holder_of

# -- The frames of the action contracts -------------------------------------------------------------

#: The profile of the frames: a version in which every claim holds (4.9.3–4.9.8 reset
#: beginTimeInLock in ``finally``). The steps checked here read the profile only for that flag
#: (workers.WorkerThrowsInsideLock) and for whether the pool needs ASYNC_FLUSH (the default flush type).
FRAME_PROFILE: Profile = PROFILES["4.9.8"]


def small_broker(profile: Profile) -> BrokerConfig:
    """The send executor alone, with two workers and one remoting thread (the frames set the pool)."""
    return broker_config(profile, io_threads=1, executors=(ExecutorName.SEND,), threads={ExecutorName.SEND: 2})


_FRAME_CONFIG = small_broker(FRAME_PROFILE)
# The parts of a frame's state that no frame chooses (remoting thread, fast failure, limiter).
_FRAME_START = initial_state(_FRAME_CONFIG)


def _broker(
    now: int,
    lock: PutLock,
    stages: tuple[WorkerStage, WorkerStage],
    files: tuple[MappedFile, ...],
    available: tuple[int, ...],
) -> BrokerState:
    """A state of the frames' broker with these parts and nothing queued.

    Send worker ``i`` works on send request ``i + 1``; an idle worker has already settled it. Built with one
    ``replace`` of a precomputed start state: under CrossHair each ``replace`` of a
    BrokerState costs milliseconds, and this runs several times per explored path.
    """
    workers: list[Worker] = []
    for index, stage in enumerate(stages):
        request = Request(index + 1, RequestCode.SEND_MESSAGE, "TopicTest", False)
        if stage is WorkerStage.IDLE:
            workers.append(Worker(WorkerStage.IDLE))
        else:
            workers.append(Worker(stage, RequestTask(request, create_timestamp=_FRAME_CONFIG.start_time_ms)))
    return replace(
        _FRAME_START,
        now=now,
        next_request_id=len(workers) + 1,
        executors=(Executor(ExecutorName.SEND, queue=(), workers=tuple(workers)),),
        lock=lock,
        files=files,
        available_buffers=available,
    )


def lock_frame_config(profile: Profile) -> BrokerConfig:
    """The lock frame's broker: a pool of two buffers and one-message files."""
    return replace(small_broker(profile), transient_store_pool_enable=True, transient_store_pool_size=2, mapped_file_size=1)


_LOCK_FRAME_CONFIG = lock_frame_config(FRAME_PROFILE)


class LockHolder(enum.Enum):
    """Who holds the put lock in a :class:`LockFrame`: every holder that at_most_one_writer allows.

    An enum rather than the spec's ``(str, int)`` holder: CrossHair would spend its paths on
    holder strings that the claim rejects anyway.
    """

    NOBODY = "nobody"
    SEND_WORKER_0 = "send worker 0"
    SEND_WORKER_1 = "send worker 1"
    HA_SERVICE = "HA service"

    @property
    def holder(self) -> Holder | None:
        """The spec's holder id."""
        match self:
            case LockHolder.NOBODY:
                return None
            case LockHolder.SEND_WORKER_0:
                return holder_of(ExecutorName.SEND, 0)
            case LockHolder.SEND_WORKER_1:
                return holder_of(ExecutorName.SEND, 1)
            case LockHolder.HA_SERVICE:
                return HA_SERVICE


@record
class LockFrame:
    """The put lock, the clock and two send workers chosen by CrossHair; the pool is fixed.

    Fixed: a pool of two buffers, one lent to a one-message file that still has room (so a
    worker inside the lock can append), the other available.
    """

    now: int  # the broker's clock
    holder: LockHolder  # putMessageLock's holder
    begin_time_in_lock: int  # CommitLog.beginTimeInLock
    first_worker: WorkerStage  # send worker 0, the one that acts
    second_worker: WorkerStage  # send worker 1

    def valid(self) -> bool:
        """The choices describe a broker: the clock is positive."""
        return self.now >= 1

    def config(self) -> BrokerConfig:
        """The configuration: a pool of two buffers and one-message files."""
        return _LOCK_FRAME_CONFIG

    def state(self) -> BrokerState:
        """The state."""
        lock = PutLock(self.holder.holder, self.begin_time_in_lock)
        files = (MappedFile(index=0, wrote=0, committed=0, write_buffer=0),)
        stages = (self.first_worker, self.second_worker)
        return _broker(self.now, lock, stages, files, available=(1,))




@record
class FileChoice:
    """One live commit-log file of a :class:`PoolFrame`."""

    wrote: int  # wrotePosition, in messages
    committed: int  # committedPosition, in messages
    lent: bool  # whether it holds a pool buffer


# Send worker 0 took the lock at the start time. Computed once: under CrossHair a call of a
# function with a contract also checks that contract.
_POOL_FRAME_LOCK = acquire_for_put(FREE_LOCK, holder_of(ExecutorName.SEND, 0), _FRAME_CONFIG.start_time_ms)


POOL_FRAME_FILES = 2  # the most live files a PoolFrame has
POOL_FRAME_SPARE = 2  # the most available buffers a PoolFrame has


@record
class PoolFrame:
    """The pool's settings and the live files chosen by CrossHair; the lock is fixed.

    Buffer ids are numbered canonically: the lent buffers 0, 1, ... in file order, then the
    ``spare`` available ones in ascending order. The steps and the claims use a buffer id only
    to compare it for equality, so every pool state that the partition claim allows is a
    renaming of one of these (and the order of the available deque matters to no claim).
    File indices are the positions, for the same reason. At most :data:`POOL_FRAME_FILES` files
    and :data:`POOL_FRAME_SPARE` spare buffers: without a bound CrossHair spends its time on long
    tuples and seldom meets the guards of the commit service. Fixed: send worker 0 holds the
    put lock, stamped at the start time; worker 1 is idle.
    """

    pool_enable: bool  # transientStorePoolEnable
    file_size: int  # mappedFileSizeCommitLog, in messages
    files: tuple[FileChoice, ...]  # the live commit-log files, oldest first
    spare: int  # how many buffers are available (transientStorePoolSize = lent + spare)

    def valid(self) -> bool:
        """The choices describe a broker (a file size >= 1) within the frame's bounds."""
        return self.file_size >= 1 and 0 <= self.spare <= POOL_FRAME_SPARE and len(self.files) <= POOL_FRAME_FILES

    def _lent(self) -> int:
        return sum(1 for f in self.files if f.lent)

    def config(self) -> BrokerConfig:
        """The configuration: the frame's pool switch, pool size and file size."""
        return replace(
            _FRAME_CONFIG,
            transient_store_pool_enable=self.pool_enable,
            transient_store_pool_size=self._lent() + self.spare,
            mapped_file_size=self.file_size,
        )

    def state(self) -> BrokerState:
        """The state."""
        files: list[MappedFile] = []
        for index, f in enumerate(self.files):
            buffer = sum(1 for earlier in self.files[:index] if earlier.lent) if f.lent else None
            files.append(MappedFile(index, f.wrote, f.committed, buffer))
        lent = self._lent()
        stages = (WorkerStage.IN_PUT_LOCK, WorkerStage.IDLE)
        available = tuple(range(lent, lent + self.spare))
        return _broker(_POOL_FRAME_LOCK.begin_time_in_lock, _POOL_FRAME_LOCK, stages, tuple(files), available)


_QUEUE_FRAME_CONFIG = small_broker(FRAME_PROFILE)


@record
class QueueFrame:
    """The send queue, the clock, the lock's stamp and the fast-failure scheduler, chosen by CrossHair.

    Send worker 0 holds the put lock stamped ``begin`` (busy or not, by the clock), or is idle
    when ``begin`` is 0; worker 1 is idle and may take the head. Up to two RequestTasks wait in
    the send queue, stamped ``first_stamp`` and ``second_stamp``; the scheduler is in ``phase``
    with its next slot, the wait of the current scan, and the switch. The pool is disabled.
    """

    now: int  # the broker's clock
    begin: int  # CommitLog.beginTimeInLock of worker 0's put (0: worker 0 idle, lock free)
    queued: int  # how many RequestTasks wait in the send queue (0 to 2)
    first_stamp: int  # createTimestamp of the head
    second_stamp: int  # createTimestamp of the task behind it
    phase: FastFailurePhase  # where the scheduler thread is
    next_run: int  # the fixed-rate schedule's next slot
    scan_wait: int  # the maxWait of the current phase-2 scan
    wait: int  # waitTimeMillsInSendQueue
    switch_on: bool  # brokerFastFailureEnable

    def valid(self) -> bool:
        """The choices describe a broker: positive clock, stamps not in the future, at most two tasks."""
        return (
            self.now >= 1
            and 0 <= self.begin <= self.now
            and 0 <= self.queued <= 2
            and 1 <= self.first_stamp <= self.now
            and 1 <= self.second_stamp <= self.now
            and self.next_run >= 1
            and self.scan_wait >= 0
            and self.wait >= 0
        )

    def config(self) -> BrokerConfig:
        """The configuration: the frames' small broker, pool disabled."""
        return _QUEUE_FRAME_CONFIG

    def state(self) -> BrokerState:
        """The state: requests 1 and 2 are the workers', 3 and 4 the queued ones."""
        if self.begin == 0:
            base = _broker(self.now, FREE_LOCK, (WorkerStage.IDLE, WorkerStage.IDLE), (), ())
        else:
            lock = PutLock(holder_of(ExecutorName.SEND, 0), self.begin)
            base = _broker(self.now, lock, (WorkerStage.IN_PUT_LOCK, WorkerStage.IDLE), (), ())
        stamps = (self.first_stamp, self.second_stamp)[: self.queued]
        queue = tuple(
            RequestTask(Request(3 + i, RequestCode.SEND_MESSAGE, "TopicTest", False), create_timestamp=stamp)
            for i, stamp in enumerate(stamps)
        )
        (send,) = base.executors
        return replace(
            base,
            next_request_id=3 + self.queued,
            executors=(replace(send, queue=queue),),
            fast_failure_phase=self.phase,
            fast_failure_next_run=self.next_run,
            fast_failure_scan_wait=self.scan_wait,
            fast_failure_enable=self.switch_on,
            queue_waits=((ExecutorName.SEND, self.wait),),
        )


_DISPATCH_FRAME_CONFIG = replace(
    _FRAME_CONFIG, executors=(replace(_FRAME_CONFIG.executor(ExecutorName.SEND), capacity=2),)
)


@record
class DispatchFrame:
    """The remoting thread's request, the send executor's threads and queue, and the lock's stamp.

    The send executor has two threads and a queue of two. ``started`` of its threads exist:
    worker 0 holds the put lock stamped ``begin`` when ``begin`` is not 0 (else it is idle),
    worker 1 is idle. ``queued`` tasks wait in the send queue. The remoting thread is idle, or
    holds a request (``oneway`` or not) received or with its task created at ``stamp``.
    """

    now: int  # the broker's clock
    begin: int  # CommitLog.beginTimeInLock of worker 0's put (0: worker 0 idle, lock free)
    started: int  # send threads created so far (0 to 2)
    queued: int  # RequestTasks in the send queue (0 to 2)
    io_stage: IoStage  # where the remoting thread is
    oneway: bool  # whether its request is oneway
    stamp: int  # createTimestamp of its task, in stage TASK_CREATED

    def valid(self) -> bool:
        """The choices describe a broker: a busy worker exists, stamps are not in the future."""
        return (
            self.now >= 1
            and 0 <= self.begin <= self.now
            and 0 <= self.started <= 2
            and (self.begin == 0 or self.started >= 1)
            and 0 <= self.queued <= 2
            and 1 <= self.stamp <= self.now
            and self.io_stage is not IoStage.ADMITTED
        )

    def config(self) -> BrokerConfig:
        """The configuration: the frames' small broker with a send queue of two, pool disabled."""
        return _DISPATCH_FRAME_CONFIG

    def state(self) -> BrokerState:
        """The state: requests 1 and 2 are the workers', then the queued ones, then the remoting thread's."""
        if self.begin == 0:
            base = _broker(self.now, FREE_LOCK, (WorkerStage.IDLE, WorkerStage.IDLE), (), ())
        else:
            lock = PutLock(holder_of(ExecutorName.SEND, 0), self.begin)
            base = _broker(self.now, lock, (WorkerStage.IN_PUT_LOCK, WorkerStage.IDLE), (), ())
        (send,) = base.executors
        queue = tuple(
            RequestTask(Request(3 + i, RequestCode.SEND_MESSAGE, "TopicTest", False), create_timestamp=1)
            for i in range(self.queued)
        )
        request_id = 3 + self.queued
        request = Request(request_id, RequestCode.SEND_MESSAGE, "TopicTest", self.oneway)
        io = IoThread(IoStage.IDLE)
        if self.io_stage is IoStage.RECEIVED:
            io = IoThread(IoStage.RECEIVED, request)
        elif self.io_stage is IoStage.TASK_CREATED:
            io = IoThread(IoStage.TASK_CREATED, request, RequestTask(request, create_timestamp=self.stamp))
        held = 0 if self.io_stage is IoStage.IDLE else 1
        return replace(
            base,
            next_request_id=request_id + held,
            io_threads=(io,),
            executors=(replace(send, queue=queue, workers=send.workers[: self.started]),),
        )


Frame = LockFrame | PoolFrame | QueueFrame | DispatchFrame


def begin_time_is_set_only_by_a_writer(lock: PutLock) -> bool:
    """beginTimeInLock is non-zero only while a writer (not the HA service) holds the lock.

    A lemma, stronger than the claim begin_time_is_zero_when_lock_is_free, that makes it
    inductive: the claim alone also allows the HA service to hold a lock stamped non-zero, and
    releasing that lock breaks the claim. Such a state is reachable only through a stuck stamp
    (an exception inside the lock in a profile without the ``finally`` reset), where the claim
    is broken already; the action contracts assume the lemma and check that every step keeps it.
    """
    return lock.begin_time_in_lock == 0 or (lock.holder is not None and lock.holder != HA_SERVICE)


def premise(frame: Frame, action: Action) -> bool:
    """The frame describes a broker, ``action`` is enabled in it, and every state claim and the lemma hold.

    The guard comes before the claims: CrossHair then meets this precondition far more often.
    """
    if not frame.valid():
        return False
    config, s = frame.config(), frame.state()
    return (
        enabled(config, s, action)
        and begin_time_is_set_only_by_a_writer(s.lock)
        and not broken_state_claims(config, s)
    )


def after(frame: Frame, action: Action) -> Next:
    """The state after the spec's own step, with the step's outputs."""
    return step(frame.config(), frame.state(), action)


def claims_hold(frame: Frame, action: Action, result: Next) -> bool:
    """Every state claim and the lemma hold in the state after, and no monitor breaks on the step."""
    config = frame.config()
    s, out = result
    return (
        begin_time_is_set_only_by_a_writer(s.lock)
        and not broken_state_claims(config, s)
        and not broken_monitors(config, frame.state(), action, s, out)
    )


# Worker actions are taken by send worker 0; worker 1 is its symmetric twin.
ACQUIRE_PUT_LOCK = workers.WorkerAcquiresPutLock(ExecutorName.SEND, 0)
APPEND_AND_UNLOCK = workers.WorkerAppendsAndUnlocks(ExecutorName.SEND, 0)
THROW_INSIDE_LOCK = workers.WorkerThrowsInsideLock(ExecutorName.SEND, 0)
CREATE_MAPPED_FILE = workers.WorkerCreatesMappedFile(ExecutorName.SEND, 0)


def check_worker_acquires_put_lock(frame: LockFrame) -> Next:
    """workers.WorkerAcquiresPutLock keeps every claim.

    pre: premise(frame, ACQUIRE_PUT_LOCK)
    post: claims_hold(frame, ACQUIRE_PUT_LOCK, __return__)
    """
    return after(frame, ACQUIRE_PUT_LOCK)


def check_worker_appends_and_unlocks(frame: LockFrame) -> Next:
    """workers.WorkerAppendsAndUnlocks keeps every claim (its append is covered by ``append_message``'s contract).

    pre: premise(frame, APPEND_AND_UNLOCK)
    post: claims_hold(frame, APPEND_AND_UNLOCK, __return__)
    """
    return after(frame, APPEND_AND_UNLOCK)


def check_worker_throws_inside_lock(frame: LockFrame) -> Next:
    """workers.WorkerThrowsInsideLock keeps every claim in the profiles that reset beginTimeInLock in ``finally``.

    pre: frame.config().profile.begin_time_reset_in_finally
    pre: premise(frame, THROW_INSIDE_LOCK)
    post: claims_hold(frame, THROW_INSIDE_LOCK, __return__)
    """
    return after(frame, THROW_INSIDE_LOCK)


def check_ha_service_acquires_put_lock(frame: LockFrame) -> Next:
    """environment.HaServiceAcquiresPutLock keeps every claim.

    pre: premise(frame, environment.HaServiceAcquiresPutLock())
    post: claims_hold(frame, environment.HaServiceAcquiresPutLock(), __return__)
    """
    return after(frame, environment.HaServiceAcquiresPutLock())


def check_ha_service_releases_put_lock(frame: LockFrame) -> Next:
    """environment.HaServiceReleasesPutLock keeps every claim.

    pre: premise(frame, environment.HaServiceReleasesPutLock())
    post: claims_hold(frame, environment.HaServiceReleasesPutLock(), __return__)
    """
    return after(frame, environment.HaServiceReleasesPutLock())


def check_worker_creates_mapped_file(frame: PoolFrame) -> Next:
    """workers.WorkerCreatesMappedFile keeps every claim.

    pre: premise(frame, CREATE_MAPPED_FILE)
    post: claims_hold(frame, CREATE_MAPPED_FILE, __return__)
    """
    return after(frame, CREATE_MAPPED_FILE)


def check_commit_service_commits(frame: PoolFrame) -> Next:
    """commitservice.CommitServiceCommits keeps every claim.

    pre: premise(frame, commitservice.CommitServiceCommits())
    post: claims_hold(frame, commitservice.CommitServiceCommits(), __return__)
    """
    return after(frame, commitservice.CommitServiceCommits())


def check_commit_service_returns_buffer(frame: PoolFrame) -> Next:
    """commitservice.CommitServiceReturnsBuffer keeps every claim.

    pre: premise(frame, commitservice.CommitServiceReturnsBuffer())
    post: claims_hold(frame, commitservice.CommitServiceReturnsBuffer(), __return__)
    """
    return after(frame, commitservice.CommitServiceReturnsBuffer())


TAKE_TASK = workers.WorkerTakesTask(ExecutorName.SEND, 1)
CLEAN_SEND_HEAD = fastfailure.FastFailureCleansExpiredHead(ExecutorName.SEND)
STOP_AT_SEND_HEAD = fastfailure.FastFailureStopsAtHead(ExecutorName.SEND)


def check_worker_takes_task(frame: QueueFrame) -> Next:
    """workers.WorkerTakesTask keeps every claim.

    pre: premise(frame, TAKE_TASK)
    post: claims_hold(frame, TAKE_TASK, __return__)
    """
    return after(frame, TAKE_TASK)


def check_fast_failure_starts_run(frame: QueueFrame) -> Next:
    """fastfailure.FastFailureStartsRun keeps every claim.

    pre: premise(frame, fastfailure.FastFailureStartsRun())
    post: claims_hold(frame, fastfailure.FastFailureStartsRun(), __return__)
    """
    return after(frame, fastfailure.FastFailureStartsRun())


def check_fast_failure_skips_run(frame: QueueFrame) -> Next:
    """fastfailure.FastFailureSkipsRun keeps every claim.

    pre: premise(frame, fastfailure.FastFailureSkipsRun())
    post: claims_hold(frame, fastfailure.FastFailureSkipsRun(), __return__)
    """
    return after(frame, fastfailure.FastFailureSkipsRun())


def check_fast_failure_drains_busy_send_queue(frame: QueueFrame) -> Next:
    """fastfailure.FastFailureDrainsBusySendQueue keeps every claim (pcbusy_answers_only_while_busy among them).

    pre: premise(frame, fastfailure.FastFailureDrainsBusySendQueue())
    post: claims_hold(frame, fastfailure.FastFailureDrainsBusySendQueue(), __return__)
    """
    return after(frame, fastfailure.FastFailureDrainsBusySendQueue())


def check_fast_failure_ends_busy_drain(frame: QueueFrame) -> Next:
    """fastfailure.FastFailureEndsBusyDrain keeps every claim.

    pre: premise(frame, fastfailure.FastFailureEndsBusyDrain())
    post: claims_hold(frame, fastfailure.FastFailureEndsBusyDrain(), __return__)
    """
    return after(frame, fastfailure.FastFailureEndsBusyDrain())


def check_fast_failure_cleans_expired_head(frame: QueueFrame) -> Next:
    """fastfailure.FastFailureCleansExpiredHead keeps every claim (timeout_answers_only_after_the_queue_wait among them).

    pre: premise(frame, CLEAN_SEND_HEAD)
    post: claims_hold(frame, CLEAN_SEND_HEAD, __return__)
    """
    return after(frame, CLEAN_SEND_HEAD)


def check_fast_failure_stops_at_head(frame: QueueFrame) -> Next:
    """fastfailure.FastFailureStopsAtHead keeps every claim.

    pre: premise(frame, STOP_AT_SEND_HEAD)
    post: claims_hold(frame, STOP_AT_SEND_HEAD, __return__)
    """
    return after(frame, STOP_AT_SEND_HEAD)


ARRIVE = remoting.RequestArrives(0, RequestCode.SEND_MESSAGE, "TopicTest", False)


def check_request_arrives(frame: DispatchFrame) -> Next:
    """remoting.RequestArrives keeps every claim.

    pre: premise(frame, ARRIVE)
    post: claims_hold(frame, ARRIVE, __return__)
    """
    return after(frame, ARRIVE)


def check_dispatch_rejects_request(frame: DispatchFrame) -> Next:
    """remoting.DispatchRejectsRequest keeps every claim (reject_request_answers_only_while_busy_or_deficient among them).

    pre: premise(frame, remoting.DispatchRejectsRequest(0))
    post: claims_hold(frame, remoting.DispatchRejectsRequest(0), __return__)
    """
    return after(frame, remoting.DispatchRejectsRequest(0))


def check_dispatch_creates_task(frame: DispatchFrame) -> Next:
    """remoting.DispatchCreatesTask keeps every claim.

    pre: premise(frame, remoting.DispatchCreatesTask(0))
    post: claims_hold(frame, remoting.DispatchCreatesTask(0), __return__)
    """
    return after(frame, remoting.DispatchCreatesTask(0))


def check_dispatch_starts_worker(frame: DispatchFrame) -> Next:
    """remoting.DispatchStartsWorker keeps every claim (no_queue_exceeds_its_capacity bounds the threads too).

    pre: premise(frame, remoting.DispatchStartsWorker(0))
    post: claims_hold(frame, remoting.DispatchStartsWorker(0), __return__)
    """
    return after(frame, remoting.DispatchStartsWorker(0))


def check_dispatch_queues_task(frame: DispatchFrame) -> Next:
    """remoting.DispatchQueuesTask keeps every claim.

    pre: premise(frame, remoting.DispatchQueuesTask(0))
    post: claims_hold(frame, remoting.DispatchQueuesTask(0), __return__)
    """
    return after(frame, remoting.DispatchQueuesTask(0))


def check_dispatch_rejects_overload(frame: DispatchFrame) -> Next:
    """remoting.DispatchRejectsOverload keeps every claim (overload_answers_only_when_the_queue_is_full among them).

    pre: premise(frame, remoting.DispatchRejectsOverload(0))
    post: claims_hold(frame, remoting.DispatchRejectsOverload(0), __return__)
    """
    return after(frame, remoting.DispatchRejectsOverload(0))


# -- Running CrossHair -----------------------------------------------------------------------------

#: The modules whose contract-carrying functions ``python -m properties.symbolic`` analyses.
DEFAULT_MODULES = ("spec.putlock", "spec.storepool", "spec.fastfailure", "properties.symbolic")

# One line of ``crosshair check`` output: "<file>:<line>: <info|error>: <message>".
_MESSAGE = re.compile(r"^.+?:\d+: (?:info|error): (?P<text>.*)$")
_CONFIRMED = "Confirmed over all paths."
_NOT_CONFIRMED = "Not confirmed."
_PRE_UNSAT = "Unable to meet precondition"


class Verdict(enum.Enum):
    """What CrossHair concluded about one function's contract."""

    PROVED = "proved"  # every condition confirmed over all paths
    NO_COUNTEREXAMPLE = "no counterexample"  # the per-condition time ran out first: a bounded search
    COUNTEREXAMPLE = "COUNTEREXAMPLE"  # CrossHair made a condition false or the function raise
    VACUOUS = "VACUOUS"  # no input met the preconditions, so nothing was checked
    ERROR = "ERROR"  # CrossHair could not run, found nothing to check, or ran over the budget

    @property
    def passed(self) -> bool:
        """Whether this verdict lets the build pass."""
        return self in (Verdict.PROVED, Verdict.NO_COUNTEREXAMPLE)


@record
class Result:
    """One function's analysis."""

    target: str  # the function's qualified name
    verdict: Verdict
    conditions: int  # how many conditions CrossHair reported on
    seconds: float  # wall-clock time of its crosshair process
    details: tuple[str, ...]  # CrossHair's messages other than confirmations, and its stderr on errors


def contract_functions(module_name: str) -> list[str]:
    """Qualified names of the functions defined in ``module_name`` whose docstring carries a contract."""
    module = importlib.import_module(module_name)
    found = []
    for name, fn in inspect.getmembers(module, inspect.isfunction):
        lines = (fn.__doc__ or "").splitlines()
        if fn.__module__ == module_name and any(line.strip().startswith(("pre:", "post:")) for line in lines):
            found.append((inspect.getsourcelines(fn)[1], f"{module_name}.{name}"))
    return [qualname for _, qualname in sorted(found)]


def crosshair_command(targets: Sequence[str], per_condition_timeout: float) -> list[str]:
    """The ``crosshair check`` command line for some modules or functions, reporting every condition."""
    return [
        sys.executable,
        "-m",
        "crosshair",
        "check",
        "--analysis_kind=PEP316",
        "--report_all",
        f"--per_condition_timeout={per_condition_timeout:g}",
        *targets,
    ]


def judge(target: str, returncode: int, stdout: str, stderr: str, seconds: float) -> Result:
    """Turn one crosshair process's exit status and output into a verdict (the exit status decides)."""
    messages = [m for m in (_MESSAGE.match(line) for line in stdout.splitlines()) if m is not None]
    texts = [m["text"] for m in messages]
    details = tuple(line for line in stdout.splitlines() if _CONFIRMED not in line)
    if returncode == 1:
        verdict = Verdict.COUNTEREXAMPLE
    elif returncode != 0 or not messages:
        verdict = Verdict.ERROR
        details += tuple(stderr.strip().splitlines()[-20:])
    elif any(t.startswith(_PRE_UNSAT) for t in texts):
        verdict = Verdict.VACUOUS
    elif all(t == _CONFIRMED for t in texts):
        verdict = Verdict.PROVED
    elif all(t in (_CONFIRMED, _NOT_CONFIRMED) for t in texts):
        verdict = Verdict.NO_COUNTEREXAMPLE
    else:
        verdict = Verdict.ERROR
    return Result(target, verdict, len(messages), seconds, details)


#: How much longer the second try of a function found VACUOUS may search (:func:`analyse`).
VACUOUS_RETRY_FACTOR = 4


def analyse(targets: Sequence[str], per_condition_timeout: float, deadline: float) -> Result:
    """:func:`analyse_once`, and for a VACUOUS verdict once more with :data:`VACUOUS_RETRY_FACTOR`
    times the time per condition: CrossHair says "Unable to meet precondition" when its search
    found no input meeting the preconditions in its time, which a loaded machine can cause (a
    clean-clone CI run saw it once for ``spec.storepool.return_committed_buffer``, 3 s a
    condition, where every run before had met them). A precondition that no input meets stays
    VACUOUS in the second try too; the verdict is the second try's, its time both tries'."""
    first = analyse_once(targets, per_condition_timeout, deadline)
    if first.verdict is not Verdict.VACUOUS:
        return first
    second = analyse_once(targets, per_condition_timeout * VACUOUS_RETRY_FACTOR, deadline)
    note = f"VACUOUS at --per_condition_timeout={per_condition_timeout:g}; tried again at {per_condition_timeout * VACUOUS_RETRY_FACTOR:g}"
    return replace(second, seconds=first.seconds + second.seconds, details=(note, *second.details))


def analyse_once(targets: Sequence[str], per_condition_timeout: float, deadline: float) -> Result:
    """Run one ``crosshair check`` process on these functions or modules (one function, in the
    runner), killing it at ``deadline`` (a ``time.monotonic`` value). The result's target names
    them all."""
    target = " ".join(targets)
    start = time.monotonic()
    remaining = deadline - start
    if remaining <= 0:
        return Result(target, Verdict.ERROR, 0, 0.0, ("not started: the overall budget ran out",))
    command = crosshair_command(targets, per_condition_timeout)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=remaining, check=False)
    except subprocess.TimeoutExpired:
        elapsed = time.monotonic() - start
        return Result(target, Verdict.ERROR, 0, elapsed, (f"killed after {elapsed:.1f} s: the overall budget ran out",))
    return judge(target, done.returncode, done.stdout, done.stderr, time.monotonic() - start)


def analyse_all(targets: Sequence[str], per_condition_timeout: float, budget: float, jobs: int) -> Iterator[Result]:
    """Analyse each target in its own process, ``jobs`` at a time, yielding results in target order."""
    deadline = time.monotonic() + budget
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(lambda t: analyse([t], per_condition_timeout, deadline), targets)


def describe(result: Result, width: int) -> str:
    """One report line: the function, its verdict, how many conditions, and its time."""
    conditions = f"{result.conditions} condition{'s' if result.conditions != 1 else ''}"
    return f"{result.target:<{width}}  {result.verdict.value:<17}  {conditions:<12}  {result.seconds:5.1f} s"


def main(argv: Sequence[str] | None = None) -> int:
    """Analyse every contract in the given modules (default: :data:`DEFAULT_MODULES`); 0 if none fails."""
    parser = argparse.ArgumentParser(prog="python -m properties.symbolic", description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", default=list(DEFAULT_MODULES), help="modules whose contracts to check")
    parser.add_argument(
        "--per-condition-timeout", type=float, default=3.0, help="CPU seconds CrossHair may spend on one condition"
    )
    parser.add_argument("--budget", type=float, default=180.0, help="wall-clock seconds for the whole run")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="crosshair processes at a time")
    args = parser.parse_args(argv)

    start = time.monotonic()
    try:
        targets = [t for module in args.modules for t in contract_functions(module)]
    except ImportError as e:
        print(f"symbolic: cannot import {e.name or 'a module'} named on the command line: {e}", file=sys.stderr)
        return 2
    if not targets:
        print(f"symbolic: no function with a contract in {', '.join(args.modules)}", file=sys.stderr)
        return 2
    width = max(len(t) for t in targets)
    counts = dict.fromkeys(Verdict, 0)
    for result in analyse_all(targets, args.per_condition_timeout, args.budget, args.jobs):
        counts[result.verdict] += 1
        print(describe(result, width), flush=True)
        if not result.verdict.passed:
            for line in result.details:
                print(f"    {line}", flush=True)
    failed = sum(n for v, n in counts.items() if not v.passed)
    summary = ", ".join(f"{n} {v.value}" for v, n in counts.items() if n)
    print(
        f"symbolic: {len(targets)} function{'s' if len(targets) != 1 else ''}: {summary}; "
        f"{'FAILED' if failed else 'passed'} in "
        f"{time.monotonic() - start:.1f} s (crosshair-tool {importlib.metadata.version('crosshair-tool')}, "
        f"--per_condition_timeout={args.per_condition_timeout:g}, {args.jobs} at a time, budget {args.budget:g} s)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
