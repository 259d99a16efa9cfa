"""The corner cases (properties/corners.py, docs/spec.md), one or more tests each, named ``test_corner_NN_...``.

Each test builds a small broker with :func:`spec.config.broker_config`, starts from
:func:`spec.state.initial_state` (or, for a situation the Java broker cannot reach, from a state
changed with ``dataclasses.replace``), drives :func:`spec.machine.step` with explicit actions and
asserts the exact outcome. The spec's state keeps no history: what a step answers is in the
:class:`~spec.state.Outputs` it returns, so each test asserts on the outputs of the steps that
wrote the answers, and the helpers that only set a situation up check that they settle no
request. Times are Java's: the clock starts at 1 ms, the busy timeout is
1000 ms, the send-queue wait 200 ms, and the first fast-failure run is due at 1001 ms, every
10 ms after.

Corners the spec leaves out have no test; :data:`LEFT_OUT` names each with its reason, and
:func:`test_every_corner_is_tested_or_left_out_with_a_reason` keeps the two lists complete.
"""

from __future__ import annotations

import enum
import re
import types
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import pytest

from properties.corners import COVERED, LEFT_OUT
from spec import commitservice, environment, fastfailure, remoting, workers
from spec.actors import Action
from spec.client import SendMode, retries_on_broker_code
from spec.codes import RequestCode, ResponseCode, ResponseKind
from spec.config import BUSY_UPPER_BOUND_MS, BrokerConfig, FlushDiskType, broker_config
from spec.machine import enabled, step
from spec.profiles import ExecutorName, Profile, PutLockKind
from spec.releases import PROFILES
from spec.putlock import FREE_LOCK, PutLock
from spec.remoting import route
from spec.state import (
    NO_OUTPUTS,
    BrokerState,
    FastFailurePhase,
    ForeignTask,
    MappedFile,
    Outputs,
    RequestTask,
    Response,
    initial_state,
    with_executor,
)
from spec.storepool import (
    INTEGER_MAX_VALUE,
    borrow_buffer,
    is_transient_store_pool_deficient,
    remain_transient_store_buffer_nums,
)
from spec.workers import holder_of

SEND = ExecutorName.SEND
PULL = ExecutorName.PULL
ALL_PROFILES = (PROFILES["4.3.2"], PROFILES["4.9.8"], PROFILES["5.3.3"])


def case_id(value: object) -> str:
    """Readable parameter ids: a profile by its version, an enum member or a function by its name."""
    if isinstance(value, Profile):
        return value.version
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, types.FunctionType):
        return value.__name__
    return str(value)


by_version = pytest.mark.parametrize("profile", ALL_PROFILES, ids=case_id)

# The broker's texts, copied from the Java source (docs/sources.md) rather than imported from the
# spec, so that a wrong remark in spec.codes fails these tests.
REJECT_REQUEST_REMARK = "[REJECTREQUEST]system busy, start flow control for a while"
OVERLOAD_REMARK = "[OVERLOAD]system busy, start flow control for a while"
PC_SYNCHRONIZED_REMARK = "[PC_SYNCHRONIZED]broker busy, start flow control for a while"

#: Corners that the spec does not model, with the reason.

START = 1  # the clock's first reading (BrokerConfig.start_time_ms)
FIRST_RUN = 1001  # start + BrokerFastFailure's 1000 ms initial delay


# -- Building blocks ---------------------------------------------------------------------------------


def small_broker(
    profile: Profile = PROFILES["5.3.3"],
    *,
    send_threads: int = 1,
    send_capacity: int = 4,
    executors: tuple[ExecutorName, ...] = (SEND, PULL),
    **overrides: Any,
) -> BrokerConfig:
    """Two remoting threads, a send executor (one thread, a queue of four) and a pull executor."""
    return broker_config(
        profile,
        io_threads=2,
        threads={SEND: send_threads, PULL: 1},
        capacities={SEND: send_capacity, PULL: 4},
        executors=executors,
        **overrides,
    )


def merged(outputs: Iterable[Outputs]) -> Outputs:
    """The outputs of several steps, in order, as one record."""
    outs = tuple(outputs)
    return Outputs(
        responses=tuple(r for o in outs for r in o.responses),
        finished_silently=tuple(i for o in outs for i in o.finished_silently),
        started=tuple(i for o in outs for i in o.started),
    )


def play(config: BrokerConfig, s: BrokerState, *actions: Action) -> tuple[BrokerState, Outputs]:
    """Apply ``actions`` in order (``step`` refuses any whose guard is false); the state reached and
    what those steps output, in order."""
    outputs = []
    for a in actions:
        s, out = step(config, s, a)
        outputs.append(out)
    return s, merged(outputs)


def quietly(config: BrokerConfig, s: BrokerState, *actions: Action) -> BrokerState:
    """Apply ``actions`` in order, none of which answers or otherwise settles a request; the state reached."""
    s, out = play(config, s, *actions)
    assert out.settled == (), f"{actions} settled {out.settled}"
    return s


def arrives(io: int, code: RequestCode = RequestCode.SEND_MESSAGE, oneway: bool = False) -> remoting.RequestArrives:
    return remoting.RequestArrives(io, code, "TopicTest", oneway)


def new_worker(io: int) -> tuple[Action, ...]:
    """processRequestCommand on ``io`` while a core thread is missing: the task starts a thread."""
    return remoting.DispatchCreatesTask(io), remoting.DispatchStartsWorker(io)


def queued(io: int) -> tuple[Action, ...]:
    """processRequestCommand on ``io`` with every core thread started: the task joins the queue."""
    return remoting.DispatchCreatesTask(io), remoting.DispatchQueuesTask(io)


def enters_put_lock(config: BrokerConfig, s: BrokerState, worker: int) -> BrokerState:
    """Send worker ``worker`` passes the put pre-check, takes the lock, and makes room in the commit log."""
    s = quietly(config, s, workers.WorkerPassesPutCheck(SEND, worker), workers.WorkerAcquiresPutLock(SEND, worker))
    if enabled(config, s, workers.WorkerCreatesMappedFile(SEND, worker)):
        s = quietly(config, s, workers.WorkerCreatesMappedFile(SEND, worker))
    return s


def writer_holds_put_lock(config: BrokerConfig, s: BrokerState, io: int = 0, worker: int = 0) -> BrokerState:
    """A send arrives on ``io``, starts send thread ``worker`` and holds the put lock from now on."""
    s = quietly(config, s, arrives(io), *new_worker(io))
    return enters_put_lock(config, s, worker)


def writer_waits_behind_replication(config: BrokerConfig, s: BrokerState) -> BrokerState:
    """The HA service holds the put lock (no stamp, so never "busy"); send thread 0 waits for it.

    Tasks queued after this stay queued as long as a test wants, with the store not busy.
    """
    s = quietly(config, s, environment.HaServiceAcquiresPutLock(), arrives(0), *new_worker(0), workers.WorkerPassesPutCheck(SEND, 0))
    assert not enabled(config, s, workers.WorkerAcquiresPutLock(SEND, 0))
    return s


def send_queue(s: BrokerState) -> tuple[int, ...]:
    """Ids of the send queue's RequestTasks, head first."""
    return tuple(t.request.id for t in s.executor(SEND).queue if isinstance(t, RequestTask))


def dispatch_choice(config: BrokerConfig, s: BrokerState, io: int) -> type:
    """The one processRequestCommand outcome enabled on ``io`` before submit."""
    choices = [
        kind
        for kind in (remoting.DispatchAnswersNotSupported, remoting.DispatchRejectsRequest, remoting.DispatchCreatesTask)
        if enabled(config, s, kind(io))
    ]
    assert len(choices) == 1, f"expected exactly one dispatch outcome, got {choices}"
    return choices[0]


def starts_phase_two(config: BrokerConfig, s: BrokerState) -> BrokerState:
    """A due fast-failure run starts and its phase 1 ends at once (the store is not busy)."""
    return quietly(config, s, fastfailure.FastFailureStartsRun(), fastfailure.FastFailureEndsBusyDrain())


def pcbusy_response(request_id: int, period: int, size: int) -> Response:
    remark = (
        "[PCBUSY_CLEAN_QUEUE]broker busy, start flow control for a while, "
        f"period in queue: {period}ms, size of queue: {size}"
    )
    return Response(request_id, ResponseCode.SYSTEM_BUSY, remark, ResponseKind.PCBUSY_CLEAN_QUEUE)


def timeout_response(request_id: int, period: int, size: int) -> Response:
    remark = (
        "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, "
        f"period in queue: {period}ms, size of queue: {size}"
    )
    return Response(request_id, ResponseCode.SYSTEM_BUSY, remark, ResponseKind.TIMEOUT_CLEAN_QUEUE)


def reject_response(request_id: int) -> Response:
    return Response(request_id, ResponseCode.SYSTEM_BUSY, REJECT_REQUEST_REMARK, ResponseKind.REJECT_REQUEST)


def with_stopped_send_head(s: BrokerState) -> BrokerState:
    """``s`` with the send queue's head marked stopRun.

    Unreachable in the Java broker, where stopRun is set only after the task left the queue;
    the spec still defines what happens (corners 15, 22, 26).
    """
    send = s.executor(SEND)
    head = send.queue[0]
    assert isinstance(head, RequestTask)
    return with_executor(s, replace(send, queue=(replace(head, stop_run=True),) + send.queue[1:]))


def busy_with_two_queued_sends(config: BrokerConfig) -> BrokerState:
    """Send 1 holds the put lock from 1 ms; sends 2 and 3 queue at 1 ms; at 1002 ms the store is busy."""
    s = writer_holds_put_lock(config, initial_state(config))
    s = quietly(config, s, arrives(1), *queued(1), arrives(1), *queued(1), environment.ClockAdvances(1001))
    assert send_queue(s) == (2, 3)
    return s


# -- 9.1 Busy detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("held_ms", "outcome"),
    [
        (1000, remoting.DispatchCreatesTask),  # diff == timeout: not busy
        (1001, remoting.DispatchRejectsRequest),
        (9_999_999, remoting.DispatchRejectsRequest),
        (10_000_000, remoting.DispatchCreatesTask),  # diff == the hard upper bound: not busy
    ],
)
def test_corner_01_busy_window_is_open_on_both_ends(held_ms: int, outcome: type) -> None:
    config = small_broker()
    s = writer_holds_put_lock(config, initial_state(config))
    assert s.lock == PutLock(holder_of(SEND, 0), START)
    s = quietly(config, s, environment.ClockAdvances(held_ms), arrives(1))
    assert dispatch_choice(config, s, 1) is outcome


def test_corner_02_begin_time_zero_means_idle_on_a_small_clock() -> None:
    # Scaled: a 10 ms timeout and a clock at 51 ms, so 10 < 51 - 0 < 10^7 would read "busy".
    config = small_broker(os_page_cache_busy_timeout_ms=10)
    s = quietly(config, initial_state(config), environment.ClockAdvances(50), arrives(0))
    assert s.lock == FREE_LOCK
    assert dispatch_choice(config, s, 0) is remoting.DispatchCreatesTask
    s = quietly(config, s, *new_worker(0))
    assert enabled(config, s, workers.WorkerPassesPutCheck(SEND, 0))
    assert not enabled(config, s, workers.WorkerFindsPageCacheBusy(SEND, 0))


def test_corner_03_only_the_lock_holders_time_counts() -> None:
    config = small_broker(send_threads=2)
    s = writer_holds_put_lock(config, initial_state(config), io=0, worker=0)
    # Writer 2 passes the pre-check at 1 ms and waits 900 ms for the lock: waiting stamps nothing.
    s = quietly(config, s, arrives(1), *new_worker(1), workers.WorkerPassesPutCheck(SEND, 1), environment.ClockAdvances(900))
    assert s.lock == PutLock(holder_of(SEND, 0), START)
    s, _ = play(config, s, workers.WorkerAppendsAndUnlocks(SEND, 0), workers.WorkerAcquiresPutLock(SEND, 1))
    assert s.lock == PutLock(holder_of(SEND, 1), 901)
    # At 1501 ms writer 2 has waited and held for 1500 ms, but held for only 600 ms: not busy.
    s = quietly(config, s, environment.ClockAdvances(600), arrives(0))
    assert dispatch_choice(config, s, 0) is remoting.DispatchCreatesTask
    s = quietly(config, s, environment.ClockAdvances(401))
    assert dispatch_choice(config, s, 0) is remoting.DispatchRejectsRequest


@pytest.mark.parametrize(
    ("profile", "stuck"), [(PROFILES["4.3.2"], True), (PROFILES["4.9.8"], False), (PROFILES["5.3.3"], True)], ids=case_id
)
def test_corner_04_exception_in_lock_leaves_begin_time_stuck_except_in_4_9_8(profile: Profile, stuck: bool) -> None:
    config = small_broker(profile)
    s = writer_holds_put_lock(config, initial_state(config))
    s, out = play(config, s, environment.ClockAdvances(5), workers.WorkerThrowsInsideLock(SEND, 0))
    assert out.responses == (Response(1, ResponseCode.SYSTEM_ERROR, None, ResponseKind.EXCEPTION),)
    assert s.lock == (PutLock(None, START) if stuck else FREE_LOCK)
    # About a second after the stamp, with nobody writing:
    s = quietly(config, s, environment.ClockAdvances(1000 - 5 + 1), arrives(0))
    if not stuck:
        assert dispatch_choice(config, s, 0) is remoting.DispatchCreatesTask
        return
    s, out = step(config, s, remoting.DispatchRejectsRequest(0))
    assert out.responses == (reject_response(2),)
    # ... and it stays busy until the hard bound, 10^7 ms after the stamp.
    s = quietly(config, s, environment.ClockAdvances(BUSY_UPPER_BOUND_MS - 1 - 1001), arrives(0))
    assert s.now - START == BUSY_UPPER_BOUND_MS - 1
    assert dispatch_choice(config, s, 0) is remoting.DispatchRejectsRequest
    s = quietly(config, s, environment.ClockAdvances(1))
    assert dispatch_choice(config, s, 0) is remoting.DispatchCreatesTask


def test_corner_04_a_writer_getting_in_before_busy_clears_the_stuck_stamp() -> None:
    config = small_broker(PROFILES["5.3.3"])
    s = writer_holds_put_lock(config, initial_state(config))
    s, _ = play(config, s, workers.WorkerThrowsInsideLock(SEND, 0), environment.ClockAdvances(500), arrives(0), *queued(0))
    s = quietly(config, s, workers.WorkerTakesTask(SEND, 0))
    assert s.lock == PutLock(None, START)
    s = enters_put_lock(config, s, 0)
    assert s.lock == PutLock(holder_of(SEND, 0), 501)
    s, _ = step(config, s, workers.WorkerAppendsAndUnlocks(SEND, 0))
    assert s.lock == FREE_LOCK


def test_corner_05_replication_holds_the_put_lock_without_a_busy_signal() -> None:
    config = small_broker()
    s = quietly(config, initial_state(config), environment.HaServiceAcquiresPutLock(), environment.ClockAdvances(5000), arrives(0))
    assert s.lock.begin_time_in_lock == 0
    assert dispatch_choice(config, s, 0) is remoting.DispatchCreatesTask
    s = quietly(config, s, *new_worker(0), workers.WorkerPassesPutCheck(SEND, 0))
    assert not enabled(config, s, workers.WorkerAcquiresPutLock(SEND, 0))  # the producer is blocked
    s = quietly(config, s, environment.HaServiceReleasesPutLock())
    assert enabled(config, s, workers.WorkerAcquiresPutLock(SEND, 0))


@pytest.mark.parametrize(
    ("profile", "code"),
    [
        (PROFILES["4.3.2"], ResponseCode.SYSTEM_ERROR),
        (PROFILES["4.9.8"], ResponseCode.SYSTEM_ERROR),
        (PROFILES["5.3.3"], ResponseCode.SYSTEM_BUSY),
    ],
    ids=case_id,
)
def test_corner_06_a_send_passes_dispatch_and_fails_the_put_pre_check(profile: Profile, code: ResponseCode) -> None:
    config = small_broker(profile, send_threads=2)
    s = writer_holds_put_lock(config, initial_state(config))
    s = quietly(config, s, arrives(1), remoting.DispatchCreatesTask(1))  # not busy at 1 ms: accepted
    s = quietly(config, s, environment.ClockAdvances(1001), remoting.DispatchStartsWorker(1))
    assert not enabled(config, s, workers.WorkerPassesPutCheck(SEND, 1))
    s, out = step(config, s, workers.WorkerFindsPageCacheBusy(SEND, 1))
    assert out.responses == (Response(2, code, PC_SYNCHRONIZED_REMARK, ResponseKind.PC_SYNCHRONIZED),)


# -- 9.2 Dispatch ----------------------------------------------------------------------------------------


def test_corner_07_reject_comes_before_task_creation_and_submit() -> None:
    # Busy and the send queue full: the answer is [REJECTREQUEST], not [OVERLOAD].
    config = small_broker(send_capacity=1)
    s = writer_holds_put_lock(config, initial_state(config))
    s = quietly(config, s, arrives(1), *queued(1), environment.ClockAdvances(1001), arrives(1))
    before = s
    assert dispatch_choice(config, s, 1) is remoting.DispatchRejectsRequest
    s, out = step(config, s, remoting.DispatchRejectsRequest(1))
    assert out.responses == (reject_response(3),)
    assert s.executors == before.executors  # no task, no queue entry
    assert s.io_threads[1].request is None and s.io_threads[1].task is None


def test_corner_07_not_supported_comes_first_and_has_a_leading_space() -> None:
    config = small_broker(default_processor_registered=False)
    s = quietly(config, initial_state(config), arrives(0, RequestCode.UNKNOWN))
    assert dispatch_choice(config, s, 0) is remoting.DispatchAnswersNotSupported
    s, out = step(config, s, remoting.DispatchAnswersNotSupported(0))
    assert out.responses == (
        Response(1, ResponseCode.REQUEST_CODE_NOT_SUPPORTED, " request type 99999 not supported", ResponseKind.NOT_SUPPORTED),
    )


def test_corner_07_create_timestamp_is_taken_when_the_task_is_built() -> None:
    config = small_broker()
    s = quietly(config, initial_state(config), arrives(0), environment.ClockAdvances(7), remoting.DispatchCreatesTask(0))
    task = s.io_threads[0].task
    assert task is not None and task.create_timestamp == START + 7 and not task.stop_run


@pytest.mark.parametrize(
    ("profile", "answered"), [(PROFILES["4.3.2"], True), (PROFILES["4.9.8"], True), (PROFILES["5.3.3"], False)], ids=case_id
)
def test_corner_08_dispatch_answers_to_oneway_requests(profile: Profile, answered: bool) -> None:
    """4.x–5.0.0 write NOT_SUPPORTED and [REJECTREQUEST] for a oneway request; 5.1.0+ do not."""
    config = small_broker(profile, send_capacity=1, default_processor_registered=False)
    s, out = play(config, initial_state(config), arrives(0, RequestCode.UNKNOWN, oneway=True), remoting.DispatchAnswersNotSupported(0))
    assert {r.request_id for r in out.responses} == ({1} if answered else set())
    assert out.finished_silently == (() if answered else (1,))

    s = writer_holds_put_lock(config, initial_state(config))
    s, out = play(config, s, environment.ClockAdvances(1001), arrives(1, oneway=True), remoting.DispatchRejectsRequest(1))
    assert out.responses == ((reject_response(2),) if answered else ())


@by_version
def test_corner_08_overload_is_never_written_for_oneway(profile: Profile) -> None:
    config = small_broker(profile, send_capacity=1)
    s = writer_holds_put_lock(config, initial_state(config))
    s, out = play(config, s, arrives(1), *queued(1), arrives(1, oneway=True), remoting.DispatchCreatesTask(1), remoting.DispatchRejectsOverload(1))
    assert out.responses == ()
    assert out.finished_silently == (3,)


@by_version
def test_corner_08_fast_failure_answers_oneway_in_both_phases(profile: Profile) -> None:
    config = small_broker(profile)
    s = writer_waits_behind_replication(config, initial_state(config))
    s = quietly(config, s, arrives(1, oneway=True), *queued(1), environment.ClockAdvances(1000))
    s, out = step(config, starts_phase_two(config, s), fastfailure.FastFailureCleansExpiredHead(SEND))
    assert out.responses == (timeout_response(2, 1000, 0),)

    s = writer_holds_put_lock(config, initial_state(config))
    s = quietly(config, s, arrives(1, oneway=True), *queued(1), environment.ClockAdvances(1001))
    s, out = play(config, s, fastfailure.FastFailureStartsRun(), fastfailure.FastFailureDrainsBusySendQueue())
    assert out.responses == (pcbusy_response(2, 1001, 0),)


def test_corner_09_overload_only_with_all_core_threads_and_a_full_queue() -> None:
    config = small_broker(send_threads=2, send_capacity=1)
    s = quietly(config, initial_state(config), arrives(0), remoting.DispatchCreatesTask(0))
    assert not enabled(config, s, remoting.DispatchQueuesTask(0))
    s = quietly(config, s, remoting.DispatchStartsWorker(0))
    s = enters_put_lock(config, s, 0)
    s, _ = step(config, s, workers.WorkerAppendsAndUnlocks(SEND, 0))  # thread 0 is now idle
    # A second core thread is still started, although thread 0 is idle: the queue is skipped.
    s = quietly(config, s, arrives(0), remoting.DispatchCreatesTask(0))
    assert not enabled(config, s, remoting.DispatchQueuesTask(0))
    s = quietly(config, s, remoting.DispatchStartsWorker(0))
    assert send_queue(s) == () and len(s.executor(SEND).workers) == 2
    s = quietly(config, s, arrives(0), *queued(0), arrives(0), remoting.DispatchCreatesTask(0))
    assert send_queue(s) == (3,)
    assert not enabled(config, s, remoting.DispatchQueuesTask(0))
    s, out = step(config, s, remoting.DispatchRejectsOverload(0))
    assert out.responses == (Response(4, ResponseCode.SYSTEM_BUSY, OVERLOAD_REMARK, ResponseKind.OVERLOAD),)


# -- 9.3 BrokerFastFailure phase 1 (PCBUSY) ------------------------------------------------------------------


def test_corner_12_busy_is_re_read_before_every_poll() -> None:
    config = small_broker()
    s = busy_with_two_queued_sends(config)
    s, out = play(config, s, fastfailure.FastFailureStartsRun(), fastfailure.FastFailureDrainsBusySendQueue())
    assert out.responses == (pcbusy_response(2, 1001, 1),)
    s, _ = step(config, s, workers.WorkerAppendsAndUnlocks(SEND, 0))  # the writer leaves: no longer busy
    assert not enabled(config, s, fastfailure.FastFailureDrainsBusySendQueue())
    s = quietly(config, s, fastfailure.FastFailureEndsBusyDrain())
    assert send_queue(s) == (3,)


def test_corner_13_phase_one_fails_a_task_zero_ms_old() -> None:
    # RECALL_MESSAGE (5.3.2+) sits on the send executor and its processor never rejects.
    config = small_broker(PROFILES["5.3.3"])
    s = writer_holds_put_lock(config, initial_state(config))
    s = quietly(config, s, environment.ClockAdvances(1001), arrives(1))
    s, refused = step(config, s, remoting.DispatchRejectsRequest(1))  # a send is refused at dispatch ...
    s = quietly(config, s, arrives(1, RequestCode.RECALL_MESSAGE), *queued(1))  # ... a recall is queued
    s, drained = play(config, s, fastfailure.FastFailureStartsRun(), fastfailure.FastFailureDrainsBusySendQueue())
    assert refused.responses + drained.responses == (reject_response(2), pcbusy_response(3, 0, 0))


def test_corner_14_phase_one_drains_only_the_send_queue() -> None:
    config = small_broker()
    s = writer_holds_put_lock(config, initial_state(config))
    s = quietly(config, s, arrives(1), *queued(1))  # send 2
    s = quietly(config, s, arrives(1, RequestCode.PULL_MESSAGE), *new_worker(1))  # pull 3 runs
    s = quietly(config, s, arrives(1, RequestCode.PULL_MESSAGE), *queued(1))  # pull 4 waits
    s, drained = play(config, s, environment.ClockAdvances(1001), fastfailure.FastFailureStartsRun(), fastfailure.FastFailureDrainsBusySendQueue())
    assert not enabled(config, s, fastfailure.FastFailureDrainsBusySendQueue())
    s, rest = play(config, s, fastfailure.FastFailureEndsBusyDrain(), fastfailure.FastFailureStopsAtHead(SEND), fastfailure.FastFailureStopsAtHead(PULL))
    assert drained.responses + rest.responses == (pcbusy_response(2, 1001, 0),)
    assert [t.request.id for t in s.executor(PULL).queue if isinstance(t, RequestTask)] == [4]


def test_corner_15_phase_one_neither_sets_nor_reads_stop_run() -> None:
    config = small_broker()
    s = busy_with_two_queued_sends(config)
    s, out = play(config, s, fastfailure.FastFailureStartsRun(), fastfailure.FastFailureDrainsBusySendQueue())
    # Nothing cancelled: the polled task got a PCBUSY answer (no TIMEOUT), and no task left is stopRun.
    assert [r.kind for r in out.responses] == [ResponseKind.PCBUSY_CLEAN_QUEUE]
    assert not any(isinstance(t, RequestTask) and t.stop_run for e in s.executors for t in e.queue)
    # A stopRun head is polled and answered like any other.
    s, out = step(config, with_stopped_send_head(s), fastfailure.FastFailureDrainsBusySendQueue())
    assert out.responses == (pcbusy_response(3, 1001, 0),)


def test_corner_16_an_empty_poll_ends_phase_one_while_still_busy() -> None:
    config = small_broker(PROFILES["5.3.3"])
    s = writer_holds_put_lock(config, initial_state(config))
    s, out = play(config, s, environment.ClockAdvances(1001), fastfailure.FastFailureStartsRun())
    assert not enabled(config, s, fastfailure.FastFailureDrainsBusySendQueue())
    s, ended = step(config, s, fastfailure.FastFailureEndsBusyDrain())
    # Still busy; a recall queued now waits for the next run's phase 1.
    s, queueing = play(config, s, arrives(1, RequestCode.RECALL_MESSAGE), *queued(1))
    assert not enabled(config, s, fastfailure.FastFailureDrainsBusySendQueue())
    s, scans = play(config, s, fastfailure.FastFailureStopsAtHead(SEND), fastfailure.FastFailureStopsAtHead(PULL))
    assert merged((out, ended, queueing, scans)).responses == () and send_queue(s) == (2,)
    s, out = play(config, s, environment.ClockAdvances(9), fastfailure.FastFailureStartsRun(), fastfailure.FastFailureDrainsBusySendQueue())
    assert out.responses == (pcbusy_response(2, 9, 0),)


def test_corner_17_phase_one_silently_drops_a_non_request_task() -> None:
    config = small_broker()
    s = writer_holds_put_lock(config, initial_state(config))
    s = quietly(config, s, environment.InternalTaskSubmitted(SEND), arrives(1), *queued(1), environment.ClockAdvances(1001))
    assert s.executor(SEND).queue[0] == ForeignTask(1)
    s = quietly(config, s, fastfailure.FastFailureStartsRun())
    assert not enabled(config, s, fastfailure.FastFailureDrainsBusySendQueue())
    s, out = step(config, s, fastfailure.FastFailureDropsForeignElement())
    assert out.responses == ()
    assert all(not isinstance(t, ForeignTask) for e in s.executors for t in e.queue)
    s, out = step(config, s, fastfailure.FastFailureDrainsBusySendQueue())
    assert out.responses == (pcbusy_response(2, 1001, 0),)


def test_corner_18_phase_one_period_at_response_time_and_size_after_poll() -> None:
    config = small_broker()
    s = writer_holds_put_lock(config, initial_state(config))
    s = quietly(config, s, arrives(1), *queued(1), environment.ClockAdvances(3), arrives(1), *queued(1), environment.ClockAdvances(1000))
    s, out = play(config, s, fastfailure.FastFailureStartsRun(), fastfailure.FastFailureDrainsBusySendQueue())
    assert out.responses == (pcbusy_response(2, 1003, 1),)
    s, out = play(config, s, environment.ClockAdvances(5), fastfailure.FastFailureDrainsBusySendQueue())
    assert out.responses == (pcbusy_response(3, 1005, 0),)


def test_corner_19_phase_one_runs_before_phase_two_which_starts_with_the_send_queue() -> None:
    config = small_broker()
    s = writer_waits_behind_replication(config, initial_state(config))
    s = quietly(config, s, arrives(1), *queued(1), environment.ClockAdvances(1000), fastfailure.FastFailureStartsRun())
    assert s.fast_failure_phase is FastFailurePhase.DRAINING_BUSY
    assert not enabled(config, s, fastfailure.FastFailureCleansExpiredHead(SEND))
    s = quietly(config, s, fastfailure.FastFailureEndsBusyDrain())
    assert [q for q in ExecutorName if enabled(config, s, fastfailure.FastFailureCleansExpiredHead(q))] == [SEND]
    s, out = step(config, s, fastfailure.FastFailureCleansExpiredHead(SEND))
    assert out.responses == (timeout_response(2, 1000, 0),)


# -- 9.4 BrokerFastFailure phase 2 (timeout) -------------------------------------------------------------


@pytest.mark.parametrize(("age", "cleaned"), [(200, True), (199, False)])
def test_corner_20_expiry_is_age_at_least_the_wait(age: int, cleaned: bool) -> None:
    config = small_broker()
    s = writer_waits_behind_replication(config, initial_state(config))
    s = quietly(config, s, environment.ClockAdvances(FIRST_RUN - START - age), arrives(1), *queued(1), environment.ClockAdvances(age))
    s = starts_phase_two(config, s)
    assert enabled(config, s, fastfailure.FastFailureCleansExpiredHead(SEND)) is cleaned
    assert enabled(config, s, fastfailure.FastFailureStopsAtHead(SEND)) is not cleaned
    if cleaned:
        s, out = step(config, s, fastfailure.FastFailureCleansExpiredHead(SEND))
        assert out.responses == (timeout_response(2, 200, 0),)


def test_corner_20_a_wait_of_zero_cleans_a_task_queued_this_millisecond() -> None:
    config = small_broker()
    s = writer_waits_behind_replication(config, initial_state(config))
    s = quietly(config, s, environment.ClockAdvances(FIRST_RUN - START), environment.OperatorSetsQueueWait(SEND, 0), arrives(1), *queued(1))
    s, out = step(config, starts_phase_two(config, s), fastfailure.FastFailureCleansExpiredHead(SEND))
    assert out.responses == (timeout_response(2, 0, 0),)


def test_corner_21_a_young_head_hides_an_older_task_behind_it() -> None:
    config = small_broker()
    s = writer_waits_behind_replication(config, initial_state(config))
    s = quietly(config, s, arrives(0), remoting.DispatchCreatesTask(0))  # send 2 stamped at 1 ms on IO thread 0 ...
    s = quietly(config, s, environment.ClockAdvances(900), arrives(1), *queued(1))  # ... send 3, stamped at 901, queues first
    s = quietly(config, s, remoting.DispatchQueuesTask(0), environment.ClockAdvances(100))
    assert send_queue(s) == (3, 2)
    s = starts_phase_two(config, s)
    assert not enabled(config, s, fastfailure.FastFailureCleansExpiredHead(SEND))
    s, out = step(config, s, fastfailure.FastFailureStopsAtHead(SEND))
    assert send_queue(s) == (3, 2) and out.responses == ()


def _expired_queue_behind(config: BrokerConfig, head: str) -> BrokerState:
    """Phase 2 about to scan a send queue whose head is ``head`` ("foreign" or "stopRun"),
    followed by send 3, queued 1000 ms ago."""
    s = writer_waits_behind_replication(config, initial_state(config))
    if head == "foreign":
        s = quietly(config, s, environment.InternalTaskSubmitted(SEND))
    else:
        s = quietly(config, s, arrives(1), *queued(1))
    s = quietly(config, s, arrives(1), *queued(1), environment.ClockAdvances(1000))
    if head == "stopRun":
        s = with_stopped_send_head(s)
    return starts_phase_two(config, s)


@pytest.mark.parametrize("head", ["foreign", "stopRun"])
def test_corner_22_an_unusable_head_ends_the_scan_without_removal(head: str) -> None:
    config = small_broker()
    s = _expired_queue_behind(config, head)
    queue = s.executor(SEND).queue
    assert len(queue) == 2
    assert not enabled(config, s, fastfailure.FastFailureCleansExpiredHead(SEND))
    s, out = step(config, s, fastfailure.FastFailureStopsAtHead(SEND))
    assert s.executor(SEND).queue == queue and out.responses == ()


def test_corner_22_an_empty_queue_ends_the_scan() -> None:
    config = small_broker()
    s = starts_phase_two(config, quietly(config, initial_state(config), environment.ClockAdvances(FIRST_RUN - START)))
    assert enabled(config, s, fastfailure.FastFailureStopsAtHead(SEND))
    assert not enabled(config, s, fastfailure.FastFailureCleansExpiredHead(SEND))


def test_corner_23_a_task_a_worker_took_gets_no_timeout_and_the_scan_goes_on() -> None:
    config = small_broker()
    s = writer_holds_put_lock(config, initial_state(config))
    s = quietly(config, s, arrives(1), *queued(1), arrives(1), *queued(1), environment.ClockAdvances(1000))
    s, first = step(config, s, workers.WorkerAppendsAndUnlocks(SEND, 0))
    s = starts_phase_two(config, s)
    s = quietly(config, s, workers.WorkerTakesTask(SEND, 0))  # wins the race for send 2
    s, cleaned = step(config, s, fastfailure.FastFailureCleansExpiredHead(SEND))
    assert cleaned.responses == (timeout_response(3, 1000, 0),)
    assert 3 not in s.requests_inside()  # cancelled: removed by phase 2, which answered it
    s, last = step(config, enters_put_lock(config, s, 0), workers.WorkerAppendsAndUnlocks(SEND, 0))
    assert [(r.request_id, r.kind) for r in first.responses + cleaned.responses + last.responses] == [
        (1, ResponseKind.SUCCESS),
        (3, ResponseKind.TIMEOUT_CLEAN_QUEUE),
        (2, ResponseKind.SUCCESS),
    ]


def test_corner_24_removal_then_stop_run_then_response_and_the_loop_continues() -> None:
    config = small_broker()
    s = writer_waits_behind_replication(config, initial_state(config))
    s = quietly(config, s, arrives(1), *queued(1), arrives(1), *queued(1), environment.ClockAdvances(1000))
    s, out = step(config, starts_phase_two(config, s), fastfailure.FastFailureCleansExpiredHead(SEND))
    assert send_queue(s) == (3,)
    assert 2 not in s.requests_inside()  # cancelled: removed by phase 2, which answered it
    assert out.responses == (timeout_response(2, 1000, 1),)
    assert enabled(config, s, fastfailure.FastFailureCleansExpiredHead(SEND))


def test_corner_25_phase_two_reads_the_clock_per_head_and_the_size_after_removal() -> None:
    config = small_broker()
    s = writer_waits_behind_replication(config, initial_state(config))
    s = quietly(config, s, arrives(1), *queued(1), arrives(1), *queued(1), environment.ClockAdvances(1000))
    s, first = step(config, starts_phase_two(config, s), fastfailure.FastFailureCleansExpiredHead(SEND))
    s, second = play(config, s, environment.ClockAdvances(6), fastfailure.FastFailureCleansExpiredHead(SEND))
    assert first.responses + second.responses == (timeout_response(2, 1000, 1), timeout_response(3, 1006, 0))


def test_corner_26_a_dequeued_task_cannot_be_cancelled() -> None:
    config = small_broker()
    s = writer_waits_behind_replication(config, initial_state(config))  # send 1 is on thread 0
    s = starts_phase_two(config, quietly(config, s, environment.ClockAdvances(1000)))
    s, scan = play(config, s, fastfailure.FastFailureStopsAtHead(SEND), environment.HaServiceReleasesPutLock())
    s, out = play(config, s, workers.WorkerAcquiresPutLock(SEND, 0), workers.WorkerCreatesMappedFile(SEND, 0), workers.WorkerAppendsAndUnlocks(SEND, 0))
    assert scan.responses + out.responses == (Response(1, ResponseCode.SUCCESS, None, ResponseKind.SUCCESS),)
    assert scan.responses == ()  # phase 2 cancelled nothing: it wrote no [TIMEOUT_CLEAN_QUEUE]


def test_corner_26_a_worker_running_a_stop_run_task_does_nothing() -> None:
    config = small_broker()
    s = writer_holds_put_lock(config, initial_state(config))
    s, before = play(config, s, workers.WorkerAppendsAndUnlocks(SEND, 0), arrives(1), *queued(1))
    s = with_stopped_send_head(s)
    assert not enabled(config, s, workers.WorkerTakesTask(SEND, 0))
    s, out = step(config, s, workers.WorkerDiscardsCancelledTask(SEND, 0))
    assert send_queue(s) == () and out.started == () and before.started == ()  # send 2's processor never starts
    assert [r.request_id for r in before.responses] == [1] and out == NO_OUTPUTS


def finish_run(config: BrokerConfig, s: BrokerState) -> BrokerState:
    """Phase 1 ends (not busy) and phase 2 stops at each queue's head: the run is over."""
    s = quietly(config, s, fastfailure.FastFailureEndsBusyDrain())
    s = quietly(config, s, *(fastfailure.FastFailureStopsAtHead(q) for q, _ in s.queue_waits))
    assert s.fast_failure_phase is FastFailurePhase.IDLE
    return s


def test_corner_27_fixed_rate_schedule_one_second_delay_ten_ms_period() -> None:
    config = small_broker()
    s = quietly(config, initial_state(config), environment.ClockAdvances(FIRST_RUN - START - 1))
    assert not enabled(config, s, fastfailure.FastFailureStartsRun())
    s = quietly(config, s, environment.ClockAdvances(1), fastfailure.FastFailureStartsRun())
    assert s.fast_failure_next_run == FIRST_RUN + 10
    s = quietly(config, s, environment.ClockAdvances(20))  # the run takes 20 ms; runs never overlap
    assert not enabled(config, s, fastfailure.FastFailureStartsRun())
    s = finish_run(config, s)
    # Fixed rate: the runs due at 1011 and 1021 follow at once; then none until 1031.
    s = finish_run(config, quietly(config, s, fastfailure.FastFailureStartsRun()))
    s = finish_run(config, quietly(config, s, fastfailure.FastFailureStartsRun()))
    assert s.fast_failure_next_run == 1031 and not enabled(config, s, fastfailure.FastFailureStartsRun())


def test_corner_27_the_switch_is_read_every_tick() -> None:
    config = small_broker()
    s = quietly(config, initial_state(config), environment.OperatorSetsFastFailureEnable(False), environment.ClockAdvances(FIRST_RUN - START))
    assert not enabled(config, s, fastfailure.FastFailureStartsRun())
    s = quietly(config, s, fastfailure.FastFailureSkipsRun())
    assert s.fast_failure_next_run == FIRST_RUN + 10 and s.fast_failure_phase is FastFailurePhase.IDLE
    s = quietly(config, s, environment.OperatorSetsFastFailureEnable(True), environment.ClockAdvances(10))
    assert enabled(config, s, fastfailure.FastFailureStartsRun()) and not enabled(config, s, fastfailure.FastFailureSkipsRun())


def test_corner_27_a_changed_wait_applies_at_the_next_tick() -> None:
    config = small_broker()
    s = writer_waits_behind_replication(config, initial_state(config))
    s = quietly(config, s, arrives(1), *queued(1), environment.ClockAdvances(1000), environment.OperatorSetsQueueWait(SEND, 5000))
    s, stopped = step(config, starts_phase_two(config, s), fastfailure.FastFailureStopsAtHead(SEND))
    s, rest = play(config, s, environment.OperatorSetsQueueWait(SEND, 200), fastfailure.FastFailureStopsAtHead(PULL), environment.ClockAdvances(10))
    s, out = step(config, starts_phase_two(config, s), fastfailure.FastFailureCleansExpiredHead(SEND))
    assert stopped.responses + rest.responses + out.responses == (timeout_response(2, 1010, 0),)


def test_corner_27_a_wait_changed_mid_scan_does_not_apply_to_that_scan() -> None:
    config = small_broker()
    s = writer_waits_behind_replication(config, initial_state(config))
    s = quietly(config, s, arrives(1), *queued(1), environment.ClockAdvances(950), arrives(1), *queued(1), environment.ClockAdvances(50))
    s, _ = step(config, starts_phase_two(config, s), fastfailure.FastFailureCleansExpiredHead(SEND))
    # The scan of the send queue is under way with maxWait = 200; the operator lowers it to 0.
    s = quietly(config, s, environment.OperatorSetsQueueWait(SEND, 0))
    assert not enabled(config, s, fastfailure.FastFailureCleansExpiredHead(SEND))  # send 3 is 50 ms old < 200
    assert enabled(config, s, fastfailure.FastFailureStopsAtHead(SEND))


@pytest.mark.parametrize(
    ("profile", "order"),
    [
        (PROFILES["4.3.2"], [("send", 200), ("pull", 5000), ("heartbeat", 31000), ("endTransaction", 3000)]),
        (PROFILES["4.9.8"], [("send", 200), ("pull", 5000), ("heartbeat", 31000), ("endTransaction", 3000)]),
        (
            PROFILES["5.3.3"],
            [
                ("send", 200),
                ("pull", 5000),
                ("litePull", 5000),
                ("heartbeat", 31000),
                ("endTransaction", 3000),
                ("ack", 3000),
                ("admin", 5000),
            ],
        ),
    ],
    ids=["4.3.2", "4.9.8", "5.3.3"],
)
def test_corner_29_the_cleaned_queues_depend_on_the_version(profile: Profile, order: list[tuple[str, int]]) -> None:
    config = broker_config(profile)
    s = starts_phase_two(config, quietly(config, initial_state(config), environment.ClockAdvances(FIRST_RUN - START)))
    visited: list[tuple[str, int]] = []
    while s.fast_failure_phase is FastFailurePhase.CLEANING:
        (queue,) = [q for q in ExecutorName if enabled(config, s, fastfailure.FastFailureStopsAtHead(q))]
        visited.append((queue.value, s.wait_for(queue)))
        s = quietly(config, s, fastfailure.FastFailureStopsAtHead(queue))
    assert visited == order
    # From 4.3.1 END_TRANSACTION has its own queue; from 5.3.2 RECALL_MESSAGE shares the send queue
    # (before, no processor: the admin executor's default processor serves it).
    assert route(config, RequestCode.END_TRANSACTION) is ExecutorName.END_TRANSACTION
    assert route(config, RequestCode.RECALL_MESSAGE) is (SEND if profile is PROFILES["5.3.3"] else ExecutorName.ADMIN)


# -- 9.5 TransientStorePool ------------------------------------------------------------------------------


def pooled_broker(profile: Profile = PROFILES["5.3.3"], **overrides: Any) -> BrokerConfig:
    return small_broker(profile, transient_store_pool_enable=True, **overrides)


@pytest.mark.parametrize(("pool_size", "deficient"), [(1, True), (2, False)])
def test_corner_30_deficient_means_exactly_zero_available(pool_size: int, deficient: bool) -> None:
    config = pooled_broker(transient_store_pool_size=pool_size)
    s = writer_holds_put_lock(config, initial_state(config))
    assert s.available_buffers == tuple(range(1, pool_size))
    s = quietly(config, s, arrives(1))
    assert dispatch_choice(config, s, 1) is (remoting.DispatchRejectsRequest if deficient else remoting.DispatchCreatesTask)


@pytest.mark.parametrize(
    ("profile", "flush", "used"),
    [
        (PROFILES["4.9.8"], FlushDiskType.SYNC_FLUSH, False),  # 4.x requires ASYNC_FLUSH
        (PROFILES["4.9.8"], FlushDiskType.ASYNC_FLUSH, True),
        (PROFILES["5.3.3"], FlushDiskType.SYNC_FLUSH, True),  # 5.0.0 dropped that condition
    ],
    ids=case_id,
)
def test_corner_30_the_pool_is_used_under_the_versions_predicate(profile: Profile, flush: FlushDiskType, used: bool) -> None:
    config = pooled_broker(profile, flush_disk_type=flush, transient_store_pool_size=1)
    s = writer_holds_put_lock(config, initial_state(config))
    assert s.files == (MappedFile(0, 0, 0, 0 if used else None),)
    assert is_transient_store_pool_deficient(s.available_buffers, config.pool_enabled) is used
    s = quietly(config, s, arrives(1))
    assert dispatch_choice(config, s, 1) is (remoting.DispatchRejectsRequest if used else remoting.DispatchCreatesTask)


def test_corner_30_a_disabled_pool_counts_integer_max_value() -> None:
    assert remain_transient_store_buffer_nums((), pool_enabled=False) == INTEGER_MAX_VALUE == 2**31 - 1
    assert not is_transient_store_pool_deficient((), pool_enabled=False)


def test_corner_31_borrowing_from_an_empty_pool_returns_null_and_the_put_succeeds() -> None:
    assert borrow_buffer(()) == (None, ())
    config = pooled_broker(send_threads=2, transient_store_pool_size=1, mapped_file_size=1)
    s = quietly(config, initial_state(config), arrives(0), *new_worker(0), arrives(1), *new_worker(1))
    s, first = step(config, enters_put_lock(config, s, 0), workers.WorkerAppendsAndUnlocks(SEND, 0))
    s, second = step(config, enters_put_lock(config, s, 1), workers.WorkerAppendsAndUnlocks(SEND, 1))
    assert s.files == (MappedFile(0, 1, 0, 0), MappedFile(1, 1, 0, None))
    assert [r.code for r in first.responses + second.responses] == [ResponseCode.SUCCESS, ResponseCode.SUCCESS]


def _one_full_file_per_send(config: BrokerConfig, sends: int) -> BrokerState:
    """``sends`` sends, one after another on send thread 0, each filling a one-message file."""
    s = writer_holds_put_lock(config, initial_state(config))
    s, _ = step(config, s, workers.WorkerAppendsAndUnlocks(SEND, 0))
    for _ in range(sends - 1):
        s = quietly(config, s, arrives(1), *queued(1), workers.WorkerTakesTask(SEND, 0))
        s, _ = step(config, enters_put_lock(config, s, 0), workers.WorkerAppendsAndUnlocks(SEND, 0))
    return s


def test_corner_32_buffers_are_lent_last_in_first_out() -> None:
    config = pooled_broker(transient_store_pool_size=3, mapped_file_size=1)
    assert initial_state(config).available_buffers == (0, 1, 2)  # init offers at the tail
    s = _one_full_file_per_send(config, 2)
    assert s.available_buffers == (2,)
    s = quietly(config, s, commitservice.CommitServiceCommits(), commitservice.CommitServiceReturnsBuffer())
    s = quietly(config, s, commitservice.CommitServiceCommits(), commitservice.CommitServiceReturnsBuffer())
    assert s.available_buffers == (1, 0, 2)
    s = quietly(config, s, arrives(1), *queued(1), workers.WorkerTakesTask(SEND, 0))
    s = enters_put_lock(config, s, 0)
    assert s.files[-1].write_buffer == 1  # the most recently returned


def test_corner_33_a_buffer_returns_only_when_its_file_is_fully_committed() -> None:
    config = pooled_broker(transient_store_pool_size=2, mapped_file_size=2)
    s, _ = step(config, writer_holds_put_lock(config, initial_state(config)), workers.WorkerAppendsAndUnlocks(SEND, 0))
    s = quietly(config, s, commitservice.CommitServiceCommits())
    assert s.files == (MappedFile(0, 1, 1, 0),)
    assert not enabled(config, s, commitservice.CommitServiceReturnsBuffer())
    s = quietly(config, s, arrives(1), *queued(1), workers.WorkerTakesTask(SEND, 0))
    s, _ = step(config, enters_put_lock(config, s, 0), workers.WorkerAppendsAndUnlocks(SEND, 0))
    s = quietly(config, s, commitservice.CommitServiceCommits(), commitservice.CommitServiceReturnsBuffer())
    assert s.files == (MappedFile(0, 2, 2, None),) and s.available_buffers == (0, 1)  # the last file stays


def test_corner_37_one_file_per_commit_and_the_boundary_takes_another_step() -> None:
    config = pooled_broker(transient_store_pool_size=3, mapped_file_size=1)
    s = _one_full_file_per_send(config, 2)
    s = quietly(config, s, commitservice.CommitServiceCommits())
    assert s.files == (MappedFile(0, 1, 1, 0), MappedFile(1, 1, 0, 1))
    assert not enabled(config, s, commitservice.CommitServiceCommits())
    s = quietly(config, s, commitservice.CommitServiceReturnsBuffer(), commitservice.CommitServiceCommits())
    assert s.files == (MappedFile(1, 1, 1, 1),) and s.available_buffers == (0, 2)


# -- 9.6 Client and defaults -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "code", "mode", "retried"),
    [
        (PROFILES["4.3.2"], ResponseCode.SYSTEM_BUSY, SendMode.SYNC, False),
        (PROFILES["4.9.8"], ResponseCode.SYSTEM_BUSY, SendMode.SYNC, False),
        (PROFILES["5.3.3"], ResponseCode.SYSTEM_BUSY, SendMode.SYNC, True),
        (PROFILES["4.3.2"], ResponseCode.SYSTEM_ERROR, SendMode.SYNC, True),
        (PROFILES["4.9.8"], ResponseCode.SYSTEM_ERROR, SendMode.SYNC, True),
        (PROFILES["5.3.3"], ResponseCode.SYSTEM_ERROR, SendMode.SYNC, True),
        (PROFILES["4.3.2"], ResponseCode.SYSTEM_ERROR, SendMode.ASYNC, False),
        (PROFILES["5.3.3"], ResponseCode.SYSTEM_BUSY, SendMode.ASYNC, False),
        (PROFILES["5.3.3"], ResponseCode.SYSTEM_ERROR, SendMode.ASYNC, False),
        (PROFILES["4.9.8"], ResponseCode.GO_AWAY, SendMode.SYNC, False),
        (PROFILES["5.3.3"], ResponseCode.GO_AWAY, SendMode.SYNC, True),  # 5.3.1+
        (PROFILES["5.3.3"], ResponseCode.SYSTEM_ERROR, SendMode.ONEWAY, False),
    ],
    ids=case_id,
)
def test_corner_38_which_broker_codes_a_send_retries(
    profile: Profile, code: ResponseCode, mode: SendMode, retried: bool
) -> None:
    assert retries_on_broker_code(profile, mode, code) is retried


@by_version
def test_corner_38_pc_synchronized_is_retried_in_every_version_reject_only_from_5_3_0(profile: Profile) -> None:
    config = small_broker(profile, send_threads=2)
    s = writer_holds_put_lock(config, initial_state(config))
    s = quietly(config, s, arrives(1), remoting.DispatchCreatesTask(1), environment.ClockAdvances(1001), remoting.DispatchStartsWorker(1))
    s, out = play(config, s, workers.WorkerFindsPageCacheBusy(SEND, 1), arrives(1), remoting.DispatchRejectsRequest(1))
    pc_synchronized, reject = out.responses
    assert pc_synchronized.kind is ResponseKind.PC_SYNCHRONIZED and reject.kind is ResponseKind.REJECT_REQUEST
    assert retries_on_broker_code(profile, SendMode.SYNC, pc_synchronized.code)
    assert retries_on_broker_code(profile, SendMode.SYNC, reject.code) is (profile.version == "5.3.3")


def sends_on_one_thread(processors: int) -> int:
    """sendMessageThreadPoolNums = 1 (4.0.0–4.9.0; the spin lock was the default)."""
    return 1


def sends_on_up_to_four_threads(processors: int) -> int:
    """sendMessageThreadPoolNums = min(P, 4) (4.9.1+)."""
    return min(processors, 4)


@pytest.mark.parametrize("processors", [1, 2, 8])
@pytest.mark.parametrize(
    ("profile", "send_threads", "lock", "ack_threads", "admin_capacity"),
    [
        (PROFILES["4.3.2"], sends_on_one_thread, PutLockKind.SPIN, None, None),
        (PROFILES["4.9.8"], sends_on_up_to_four_threads, PutLockKind.REENTRANT, None, None),
        (PROFILES["5.3.3"], sends_on_up_to_four_threads, PutLockKind.REENTRANT, 16, 10_000),
    ],
    ids=case_id,
)
def test_corner_39_version_dependent_defaults(
    profile: Profile,
    send_threads: Callable[[int], int],
    lock: PutLockKind,
    ack_threads: int | None,
    admin_capacity: int | None,
    processors: int,
) -> None:
    config = broker_config(profile, processors=processors)
    assert config.executor(SEND).threads == send_threads(processors)
    assert profile.put_lock is lock
    has_ack = any(e.name is ExecutorName.ACK for e in config.executors)
    assert (config.executor(ExecutorName.ACK).threads if has_ack else None) == ack_threads
    assert config.executor(ExecutorName.ADMIN).capacity == admin_capacity


def test_every_corner_is_tested_or_left_out_with_a_reason() -> None:
    tested = {int(m.group(1)) for name in globals() if (m := re.fullmatch(r"test_corner_(\d\d)_\w+", name))}
    assert tested & set(LEFT_OUT) == set(), "a corner is both tested and left out"
    assert tested | set(LEFT_OUT) == set(range(1, 40)), f"missing: {set(range(1, 40)) - tested - set(LEFT_OUT)}"
    assert tested == set(COVERED), f"properties.corners.COVERED {sorted(COVERED)} != tested corners {sorted(tested)}"
