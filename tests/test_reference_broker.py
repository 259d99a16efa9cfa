"""Unit tests of the reference broker alone: busy bounds, the LIFO pool, OVERLOAD, oneway answers,
fast failure's order, the put locks, and refused inputs. Expected values are written out by hand
from the Java source (docs/sources.md), not computed by the spec."""

from __future__ import annotations

from typing import Any

import pytest

from reference.broker import Broker, StepRefused
from reference.store import IllegalMonitorStateError, PutMessageReentrantLock, PutMessageSpinLock
from spec.actors import Action
from spec.commitservice import CommitServiceCommits, CommitServiceReturnsBuffer
from spec.fastfailure import (
    FastFailureCleansExpiredHead,
    FastFailureDrainsBusySendQueue,
    FastFailureDropsForeignElement,
    FastFailureEndsBusyDrain,
    FastFailureStartsRun,
    FastFailureStopsAtHead,
)
from spec.machine import ACTION_TYPES
from spec.remoting import (
    DispatchCreatesTask,
    DispatchQueuesTask,
    DispatchRejectsOverload,
    DispatchStartsWorker,
    RateLimitHandlerAdmits,
    RateLimitHandlerThrottles,
)
from spec.workers import WorkerAcquiresPutLock, WorkerAppendsAndUnlocks, WorkerCreatesMappedFile, WorkerPassesPutCheck
from spec.codes import RequestCode, ResponseCode, ResponseKind
from spec.config import BrokerConfig, RateLimitConfig, broker_config
from spec.profiles import ExecutorName
from spec.releases import PROFILES
from spec.putlock import HA_SERVICE
from spec.state import FastFailurePhase, Outputs

SEND, PULL = ExecutorName.SEND, ExecutorName.PULL
VERSIONS = sorted(PROFILES)
START = 1


def _config(version: str = "5.3.3", **overrides: Any) -> BrokerConfig:
    settings: dict[str, Any] = dict(
        io_threads=2,
        executors=(SEND, PULL),
        threads={SEND: 1, PULL: 1},
        capacities={SEND: 3, PULL: 3},
        queue_waits={SEND: 5, PULL: 7},
        os_page_cache_busy_timeout_ms=10,
        fast_failure_initial_delay_ms=1,
        fast_failure_period_ms=1,
        mapped_file_size=1,
    )
    settings.update(overrides)
    return broker_config(PROFILES[version], **settings)


def _steps(broker: Broker, step: Any) -> list[Action]:
    """Call ``step`` until the thread cannot move; the actions it took."""
    taken = []
    while (action := step()) is not None:
        taken.append(action)
    return taken


def _fast_failure_steps(broker: Broker) -> list[tuple[Action, Outputs]]:
    """One whole run of the (due) fast-failure task: each action it took, with that step's outputs."""
    first = broker.step_fast_failure()
    assert first == FastFailureStartsRun(), f"no run was due: {first}"
    taken: list[tuple[Action, Outputs]] = [(first, broker.outputs)]
    while broker.observe().fast_failure_phase is not FastFailurePhase.IDLE:
        if (action := broker.step_fast_failure()) is not None:
            taken.append((action, broker.outputs))
    return taken


def _fast_failure_run(broker: Broker) -> list[Action]:
    """One whole run of the (due) fast-failure task."""
    return [a for a, _ in _fast_failure_steps(broker)]


def _dispatch(broker: Broker, code: RequestCode = RequestCode.SEND_MESSAGE, *, io: int = 0, oneway: bool = False) -> list[Action]:
    broker.request_arrives(io, code, "TopicTest", oneway)
    return _steps(broker, lambda: broker.step_io_thread(io))


def _into_put_lock(broker: Broker) -> None:
    """A send whose worker ends up holding the put lock (stamped now)."""
    assert _dispatch(broker)[-1] == DispatchStartsWorker(0)
    assert broker.step_worker(SEND, 0) == WorkerPassesPutCheck(SEND, 0)
    assert broker.step_worker(SEND, 0) == WorkerAcquiresPutLock(SEND, 0)


# -- isOSPageCacheBusy ----------------------------------------------------------------------------


def test_busy_window_is_open_on_both_ends() -> None:
    broker = Broker(_config())
    broker.clock_advances(50)
    assert not broker.message_store.is_os_page_cache_busy(), "beginTimeInLock == 0 is idle whatever the clock"
    _into_put_lock(broker)
    begin = broker.message_store.commit_log.begin_time_in_lock
    assert begin == broker.now
    timeline = [(10, False), (1, True), (10_000_000 - 11 - 1, True), (1, False)]
    for advance, busy in timeline:
        broker.clock_advances(advance)
        assert broker.message_store.is_os_page_cache_busy() is busy, f"diff {broker.now - begin} ms: expected busy={busy}"


# -- TransientStorePool ----------------------------------------------------------------------------


def test_buffers_are_reused_last_in_first_out() -> None:
    broker = Broker(_config(transient_store_pool_enable=True, transient_store_pool_size=3))
    assert broker.observe().available_buffers == (0, 1, 2), "init offers each buffer at the tail"
    for _ in range(2):  # two one-message files: buffers 0 and 1 are lent
        _dispatch(broker)
        assert WorkerAppendsAndUnlocks(SEND, 0) in _steps(broker, lambda: broker.step_worker(SEND, 0))
    assert [f.write_buffer for f in broker.observe().files] == [0, 1]
    assert broker.observe().available_buffers == (2,)
    commits = _steps(broker, broker.step_commit_service)
    assert commits == [CommitServiceCommits(), CommitServiceReturnsBuffer()] * 2
    assert broker.observe().available_buffers == (1, 0, 2), "each return goes to the head"
    _dispatch(broker)
    assert WorkerCreatesMappedFile(SEND, 0) in _steps(broker, lambda: broker.step_worker(SEND, 0))
    assert broker.observe().files[-1].write_buffer == 1, "the last buffer returned is lent first"


def test_an_empty_pool_refuses_every_send_at_dispatch() -> None:
    broker = Broker(_config(transient_store_pool_enable=True, transient_store_pool_size=0))
    _dispatch(broker)
    assert [(r.code, r.kind) for r in broker.responses] == [(ResponseCode.SYSTEM_BUSY, ResponseKind.REJECT_REQUEST)]


# -- Dispatch: threads first, then the queue, then OVERLOAD ---------------------------------------------


def test_overload_only_after_every_core_thread_started_and_the_queue_is_full() -> None:
    broker = Broker(_config(threads={SEND: 2, PULL: 1}, capacities={SEND: 1, PULL: 1}))
    outcomes = [_dispatch(broker)[-1] for _ in range(4)]
    assert outcomes == [DispatchStartsWorker(0), DispatchStartsWorker(0), DispatchQueuesTask(0), DispatchRejectsOverload(0)]
    (response,) = broker.responses
    assert (response.request_id, response.code) == (4, ResponseCode.SYSTEM_BUSY)
    assert response.remark == "[OVERLOAD]system busy, start flow control for a while"


# -- Oneway: who answers, per profile ---------------------------------------------------------------------

# 4.0.0–5.0.0 write NOT_SUPPORTED and [REJECTREQUEST] even for oneway; 5.1.0+ drop them (corner 8).
DISPATCH_ANSWERS_ONEWAY = {"4.3.2": True, "4.9.8": True, "5.3.3": False}


@pytest.mark.parametrize("version", VERSIONS)
def test_oneway_answers_per_profile(version: str) -> None:
    busy = Broker(_config(version))
    _into_put_lock(busy)
    busy.clock_advances(11)
    _dispatch(busy, io=1, oneway=True)  # rejected at dispatch: store busy
    written = [r.kind for r in busy.responses]
    assert written == ([ResponseKind.REJECT_REQUEST] if DISPATCH_ANSWERS_ONEWAY[version] else [])

    bare = Broker(_config(version, default_processor_registered=False))
    _dispatch(bare, RequestCode.UNKNOWN, oneway=True)
    written = [r.kind for r in bare.responses]
    assert written == ([ResponseKind.NOT_SUPPORTED] if DISPATCH_ANSWERS_ONEWAY[version] else [])

    full = Broker(_config(version, capacities={SEND: 0, PULL: 0}))
    _dispatch(full, oneway=True)  # starts the only thread
    _dispatch(full, oneway=True)  # overload: never answered to oneway
    assert full.responses == [] and full.outputs.finished_silently == (2,)
    assert _steps(full, lambda: full.step_worker(SEND, 0))[-1] == WorkerAppendsAndUnlocks(SEND, 0)
    assert full.responses == [] and full.outputs.finished_silently == (1,), "the worker never answers oneway"


def test_timeout_cleaning_answers_a_oneway_request() -> None:
    broker = Broker(_config())
    _dispatch(broker)  # occupies the send thread
    _dispatch(broker, oneway=True)  # queued
    broker.clock_advances(5)
    _fast_failure_run(broker)
    assert [(r.request_id, r.kind) for r in broker.responses] == [(2, ResponseKind.TIMEOUT_CLEAN_QUEUE)]


# -- BrokerFastFailure ------------------------------------------------------------------------------------


def test_phase_one_drains_the_busy_send_queue_before_phase_two() -> None:
    broker = Broker(_config())
    _into_put_lock(broker)  # request 1 holds the lock
    _dispatch(broker)  # request 2 queued at t=1
    broker.internal_task_submitted(SEND)
    _dispatch(broker)  # request 3 queued
    _dispatch(broker, RequestCode.PULL_MESSAGE)  # request 4 on the pull thread
    _dispatch(broker, RequestCode.PULL_MESSAGE)  # request 5 queued for pull
    broker.clock_advances(11)  # busy: held 11 ms > 10 ms
    steps = _fast_failure_steps(broker)
    assert [a for a, _ in steps] == [
        FastFailureStartsRun(),
        FastFailureDrainsBusySendQueue(),
        FastFailureDropsForeignElement(),
        FastFailureDrainsBusySendQueue(),
        FastFailureEndsBusyDrain(),
        FastFailureStopsAtHead(SEND),
        FastFailureCleansExpiredHead(PULL),
        FastFailureStopsAtHead(PULL),
    ]
    assert [(r.request_id, r.remark) for r in broker.responses] == [
        (2, "[PCBUSY_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: 11ms, size of queue: 2"),
        (3, "[PCBUSY_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: 11ms, size of queue: 0"),
        (5, "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: 11ms, size of queue: 0"),
    ]
    cancelled = [
        r.request_id
        for a, out in steps
        if isinstance(a, FastFailureCleansExpiredHead)
        for r in out.responses
        if r.kind is ResponseKind.TIMEOUT_CLEAN_QUEUE
    ]
    assert cancelled == [5], "only phase 2 sets stopRun"
    assert 5 not in broker.observe().requests_inside(), "phase 2 removed the task it answered"


def test_phase_two_cleans_at_exactly_the_wait_and_only_from_the_head() -> None:
    broker = Broker(_config())
    _dispatch(broker)  # request 1 runs on the send thread
    broker.request_arrives(0, RequestCode.SEND_MESSAGE, "TopicTest", False)  # request 2
    assert broker.step_io_thread(0) == DispatchCreatesTask(0)  # created at t=1
    broker.clock_advances(1)
    _dispatch(broker, io=1)  # request 3, created at t=2, queued first
    assert broker.step_io_thread(0) == DispatchQueuesTask(0)  # request 2 queued behind it
    broker.clock_advances(5)  # t=7: request 2 waited 6 ms, request 3 exactly 5 ms (the wait)
    assert _fast_failure_run(broker) == [
        FastFailureStartsRun(),
        FastFailureEndsBusyDrain(),
        FastFailureCleansExpiredHead(SEND),
        FastFailureCleansExpiredHead(SEND),
        FastFailureStopsAtHead(SEND),
        FastFailureStopsAtHead(PULL),
    ]
    assert [r.request_id for r in broker.responses] == [3, 2]


def test_a_young_head_shields_an_older_task_behind_it() -> None:
    broker = Broker(_config())
    _dispatch(broker)  # request 1 runs on the send thread
    broker.request_arrives(0, RequestCode.SEND_MESSAGE, "TopicTest", False)  # request 2
    broker.step_io_thread(0)  # created at t=1
    broker.clock_advances(2)
    _dispatch(broker, io=1)  # request 3, created at t=3, queued first
    broker.step_io_thread(0)  # request 2 queued behind it
    broker.clock_advances(4)  # t=7: request 2 waited 6 ms >= 5, request 3 only 4 ms
    assert FastFailureCleansExpiredHead(SEND) not in _fast_failure_run(broker)
    assert broker.responses == []


# -- The put lock -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "lock_class"), [("4.3.2", PutMessageSpinLock), ("4.9.8", PutMessageReentrantLock), ("5.3.3", PutMessageReentrantLock)])
def test_each_profile_gets_its_put_lock(version: str, lock_class: type) -> None:
    assert isinstance(Broker(_config(version)).message_store.commit_log.put_message_lock, lock_class)


def test_the_spin_lock_is_not_reentrant_and_unlocking_it_free_is_a_no_op() -> None:
    lock = PutMessageSpinLock()
    lock.unlock(("send", 0))
    assert lock.try_lock(("send", 0)) and not lock.try_lock(("send", 0)) and not lock.try_lock(HA_SERVICE)
    lock.unlock(("send", 0))
    assert lock.holder is None


def test_the_reentrant_lock_counts_holds_and_refuses_a_foreign_unlock() -> None:
    lock = PutMessageReentrantLock()
    assert lock.try_lock(HA_SERVICE) and lock.try_lock(HA_SERVICE) and not lock.try_lock(("send", 0))
    with pytest.raises(IllegalMonitorStateError):
        lock.unlock(("send", 0))
    lock.unlock(HA_SERVICE)
    assert lock.holder == HA_SERVICE
    lock.unlock(HA_SERVICE)
    assert lock.holder is None


# 4.9.3–4.9.8 reset beginTimeInLock in finally; 4.0–4.9.2 and 5.x leave it stuck (corner 4).
RESETS_IN_FINALLY = {"4.3.2": False, "4.9.8": True, "5.3.3": False}


@pytest.mark.parametrize("version", VERSIONS)
def test_an_exception_inside_the_lock_leaves_the_stamp_where_the_profile_says(version: str) -> None:
    broker = Broker(_config(version))
    _into_put_lock(broker)
    stamp = broker.message_store.commit_log.begin_time_in_lock
    broker.worker_throws_inside_lock(SEND, 0)
    lock = broker.observe().lock
    assert lock.holder is None
    assert lock.begin_time_in_lock == (0 if RESETS_IN_FINALLY[version] else stamp)
    assert [(r.code, r.kind) for r in broker.responses] == [(ResponseCode.SYSTEM_ERROR, ResponseKind.EXCEPTION)]


def test_the_ha_service_holds_the_lock_without_making_the_broker_busy() -> None:
    broker = Broker(_config())
    broker.ha_service_acquires_put_lock()
    _dispatch(broker)
    assert broker.step_worker(SEND, 0) == WorkerPassesPutCheck(SEND, 0)
    broker.clock_advances(100)
    assert broker.step_worker(SEND, 0) is None, "the worker waits for the lock"
    assert not broker.message_store.is_os_page_cache_busy()
    broker.ha_service_releases_put_lock()
    assert broker.step_worker(SEND, 0) == WorkerAcquiresPutLock(SEND, 0)


# -- The per-topic limiter (source 004) ----------------------------------------------------------------


def test_the_limiter_throttles_a_topic_even_for_oneway_and_its_first_request_fixes_the_rate() -> None:
    limits = RateLimitConfig(enabled=True, default_qps=1.0, send_msg_back_qps=4.0)
    broker = Broker(_config(rate_limit=limits))
    broker.request_arrives(0, RequestCode.CONSUMER_SEND_MSG_BACK, "%RETRY%group", True)
    assert broker.step_io_thread(0) == RateLimitHandlerAdmits(0)  # the bucket is created at 4/s
    _steps(broker, lambda: broker.step_io_thread(0))
    broker.request_arrives(0, RequestCode.SEND_MESSAGE, "%RETRY%group", True)
    assert broker.step_io_thread(0) == RateLimitHandlerThrottles(0)
    (response,) = broker.responses
    assert (response.request_id, response.code) == (2, ResponseCode.SYSTEM_BUSY)
    # The first permit's cost, 1/4 s, is the second request's wait (at 1/s it would be 1000000).
    assert response.remark == "[RateLimit] for %RETRY%group need wait:250000microsecs"


# -- Refused inputs -------------------------------------------------------------------------------------


def test_inputs_the_broker_cannot_take_now_are_refused_with_a_reason() -> None:
    broker = Broker(_config())
    broker.request_arrives(0, RequestCode.SEND_MESSAGE, "TopicTest", False)
    with pytest.raises(StepRefused, match="IO thread 0 is still handling request 1"):
        broker.request_arrives(0, RequestCode.SEND_MESSAGE, "TopicTest", False)
    with pytest.raises(StepRefused, match="heartbeat executor"):
        broker.request_arrives(1, RequestCode.HEART_BEAT, "", False)
    with pytest.raises(StepRefused, match="forward"):
        broker.clock_advances(0)
    assert _steps(broker, lambda: broker.step_io_thread(0))[-1] == DispatchStartsWorker(0)
    with pytest.raises(StepRefused, match="not inside the put lock"):
        broker.worker_throws_inside_lock(SEND, 0)
    with pytest.raises(StepRefused, match="no request waiting at the rate-limit handler"):
        broker.rate_limit_handler_fails_open(1)
    with pytest.raises(StepRefused, match="does not hold"):
        broker.ha_service_releases_put_lock()

