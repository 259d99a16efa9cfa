"""Named scenarios: fixed action sequences from the source articles and RocketMQ's own tests.

Each scenario drives the spec and an implementation in lockstep (every step checked as in
:mod:`properties.lockstep`) through a deterministic sequence and asserts the exact responses,
code and remark. ``tests/test_scenarios.py`` runs each against the reference for every profile
it applies to; :mod:`properties.mutants` runs them against mutants.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from properties.lockstep import BrokerFactory, LockstepRun
from spec.actors import COMMIT_SERVICE, FAST_FAILURE, IoThreadId, ThreadId, WorkerId
from reference.broker import Broker
from reference.requests import FutureTaskExt, RemotingCommand, RequestTask
from spec import client, state
from spec.environment import ClockAdvances, InternalTaskSubmitted, OperatorSetsFastFailureEnable, OperatorSetsQueueWait
from spec.fastfailure import FastFailureStartsRun
from spec.remoting import RequestArrives
from spec.codes import (
    OVERLOAD_REMARK,
    PC_SYNCHRONIZED_REMARK,
    REJECT_REQUEST_REMARK,
    pcbusy_remark,
    RequestCode,
    ResponseCode,
    ResponseKind,
    timeout_remark,
)
from spec.config import BrokerConfig, RateLimitConfig, broker_config
from spec.machine import Environment
from spec.profiles import ExecutorName, Profile
from spec.releases import PROFILES
from spec.state import FastFailurePhase, IoStage, Response, WorkerStage

SEND = ExecutorName.SEND
TOPIC = "TopicTest"
RETRY_TOPIC = "%RETRY%group"
_NO_ENVIRONMENT = Environment(requests=(), max_requests=0, clock_steps=(), max_elapsed_ms=0)


def java_broker(profile: Profile, **overrides: Any) -> BrokerConfig:
    """The profile's defaults with Java timings (1000 ms busy timeout, 200 ms send wait, 10 ms fast
    failure period); one send thread unless said otherwise."""
    settings: dict[str, Any] = dict(threads={SEND: 1})
    settings.update(overrides)
    return broker_config(profile, **settings)


class Driver:
    """A lockstep run with the moves a scenario is written in."""

    def __init__(self, config: BrokerConfig, factory: BrokerFactory) -> None:
        self.run = LockstepRun(config, factory, _NO_ENVIRONMENT)
        self.run.check_all()

    @property
    def now(self) -> int:
        return self.run.spec.now

    def arrive(self, code: RequestCode = RequestCode.SEND_MESSAGE, topic: str = TOPIC, *, oneway: bool = False, io: int = 0) -> int:
        """A request arrives on IO thread ``io``; returns its id."""
        request_id = self.run.spec.next_request_id
        self.run.take(RequestArrives(io, code, topic, oneway))
        return request_id

    def dispatch(self, io: int = 0) -> None:
        """IO thread ``io`` runs its request through the limiter and processRequestCommand to the end."""
        while self.run.spec.io_threads[io].stage is not IoStage.IDLE:
            self.run.step(IoThreadId(io))

    def create_task(self, io: int = 0) -> None:
        """IO thread ``io`` creates the RequestTask (stamps it) but does not submit it yet."""
        while self.run.spec.io_threads[io].stage is not IoStage.TASK_CREATED:
            self.run.step(IoThreadId(io))

    def send(self, code: RequestCode = RequestCode.SEND_MESSAGE, topic: str = TOPIC, *, oneway: bool = False, io: int = 0) -> int:
        """A request arrives and is dispatched; returns its id."""
        request_id = self.arrive(code, topic, oneway=oneway, io=io)
        self.dispatch(io)
        return request_id

    def step(self, thread: ThreadId, times: int = 1) -> None:
        """Take ``thread``'s next ``times`` steps."""
        for _ in range(times):
            self.run.step(thread)

    def worker_until(self, executor: ExecutorName, worker: int, stage: WorkerStage) -> None:
        """Step a worker until it reaches ``stage``."""
        while self.worker_stage(executor, worker) is not stage:
            self.run.step(WorkerId(executor, worker))

    def worker_stage(self, executor: ExecutorName, worker: int) -> WorkerStage:
        return self.run.spec.executor(executor).workers[worker].stage

    def hold_put_lock(self, executor: ExecutorName = SEND, worker: int = 0) -> None:
        """The worker passes the pre-check and takes the put lock (a put that then takes its time)."""
        self.worker_until(executor, worker, WorkerStage.IN_PUT_LOCK)

    def tick(self, ms: int) -> None:
        """Time passes in one step (fast failure is not run)."""
        self.run.take(ClockAdvances(ms))

    def fast_failure_runs(self) -> None:
        """Every due fast-failure run, each to its end."""
        while self.run.spec_step_of(FAST_FAILURE) is not None:
            self.run.step(FAST_FAILURE)

    def advance(self, ms: int) -> None:
        """Let ``ms`` pass in fast-failure periods, running every due fast-failure run after each."""
        step_ms = self.run.config.fast_failure_period_ms
        target = self.now + ms
        while self.now < target:
            self.tick(min(step_ms, target - self.now))
            self.fast_failure_runs()

    def response(self, request_id: int) -> Response | None:
        """The response written for ``request_id``, if any."""
        found = [r for r in self.run.responses if r.request_id == request_id]
        assert len(found) <= 1
        return found[0] if found else None

    def expect(self, request_id: int, code: ResponseCode, remark: str | None) -> None:
        """Assert the exact answer to ``request_id``."""
        r = self.response(request_id)
        got = None if r is None else (r.code, r.remark)
        assert got == (code, remark), f"request {request_id}: expected ({code.name}, {remark!r}), got {got}"

    def expect_silence(self, request_id: int) -> None:
        """Assert the broker finished ``request_id`` without writing a response."""
        assert self.response(request_id) is None, f"request {request_id} got {self.response(request_id)}"
        assert request_id in self.run.finished_silently, f"request {request_id} is not finished"


def sync_send_is_retried(profile: Profile, code: ResponseCode) -> bool:
    """The producer's decision for a SYNC send (spec.client, corner 38)."""
    return client.retries_on_broker_code(profile, client.SendMode.SYNC, code)


# -- The scenarios --------------------------------------------------------------------------------------


def page_cache_busy_rejects_and_drains(profile: Profile, factory: BrokerFactory) -> None:
    """Sources 000/001: a put holds the lock past 1000 ms: a new send gets [REJECTREQUEST]; a send
    queued before the broker turned busy is drained by fast failure with [PCBUSY_CLEAN_QUEUE]."""
    d = Driver(java_broker(profile), factory)
    d.send()  # r1 starts the send thread
    d.hold_put_lock()
    queued = d.send(io=1)
    d.tick(1001)  # beginTimeInLock is 1001 ms old: timeout < diff
    rejected = d.send()
    d.expect(rejected, ResponseCode.SYSTEM_BUSY, REJECT_REQUEST_REMARK)
    d.fast_failure_runs()
    d.expect(queued, ResponseCode.SYSTEM_BUSY, pcbusy_remark(1001, 0))


def full_send_queue_overloads(profile: Profile, factory: BrokerFactory) -> None:
    """Source 000: one send thread busy and a full queue: the next send gets [OVERLOAD]; a oneway
    send is refused without an answer (every version)."""
    d = Driver(java_broker(profile, capacities={SEND: 1}), factory)
    d.send()
    d.send()  # queued: the queue of one is full
    refused = d.send()
    d.expect(refused, ResponseCode.SYSTEM_BUSY, OVERLOAD_REMARK)
    d.expect_silence(d.send(oneway=True))


def slow_put_answers_pc_synchronized(profile: Profile, factory: BrokerFactory) -> None:
    """Source 000 and SendMessageProcessorTest.testProcessRequest_PageCacheBusy: a send that passed
    dispatch finds the store busy at the put pre-check: [PC_SYNCHRONIZED], SYSTEM_ERROR up to
    5.2.0 and SYSTEM_BUSY from 5.3.0; a send-back answers SYSTEM_ERROR with the status name.
    A sync producer retries it in every profile (SYSTEM_ERROR always, SYSTEM_BUSY from 5.3.0)."""
    d = Driver(java_broker(profile, threads={SEND: 3}), factory)
    d.send()
    d.hold_put_lock(SEND, 0)
    second = d.send()  # starts send thread 1 with the task in hand
    back = d.send(RequestCode.CONSUMER_SEND_MSG_BACK, RETRY_TOPIC)  # starts thread 2
    d.tick(1001)
    d.step(WorkerId(SEND, 1))
    d.step(WorkerId(SEND, 2))
    d.expect(second, profile.pc_synchronized_code, PC_SYNCHRONIZED_REMARK)
    d.expect(back, ResponseCode.SYSTEM_ERROR, profile.page_cache_busy_status)
    assert sync_send_is_retried(profile, profile.pc_synchronized_code)


def send_queue_backed_up_past_200ms_times_out(profile: Profile, factory: BrokerFactory) -> None:
    """Source 002: with the Java defaults (200 ms send wait) and the send thread in a put (not busy),
    queued sends older than 200 ms get [TIMEOUT_CLEAN_QUEUE] with their period and the queue
    size after each removal; the first run is 1000 ms after start."""
    d = Driver(java_broker(profile), factory)
    d.send()
    d.hold_put_lock()
    first, second = d.send(), d.send(io=1)
    d.tick(250)
    third = d.send()
    d.advance(750)  # to 1001: the first run; beginTimeInLock is exactly 1000 ms old, not busy
    d.expect(first, ResponseCode.SYSTEM_BUSY, timeout_remark(1000, 2))
    d.expect(second, ResponseCode.SYSTEM_BUSY, timeout_remark(1000, 1))
    d.expect(third, ResponseCode.SYSTEM_BUSY, timeout_remark(750, 0))


def pool_of_one_rejects_once_lent(profile: Profile, factory: BrokerFactory) -> None:
    """Issue #2439: transientStorePoolSize=1: the first file borrows the only buffer, and every send
    after it gets [REJECTREQUEST]; the file never fills, so the buffer never comes back."""
    d = Driver(java_broker(profile, transient_store_pool_enable=True, transient_store_pool_size=1), factory)
    d.send()
    d.worker_until(SEND, 0, WorkerStage.IDLE)  # created the file with the only buffer, appended, answered
    rejected = d.send()
    d.expect(rejected, ResponseCode.SYSTEM_BUSY, REJECT_REQUEST_REMARK)
    d.step(COMMIT_SERVICE)  # commits the one message; the file is not full: nothing to return
    assert d.run.spec_step_of(COMMIT_SERVICE) is None and not d.run.spec.available_buffers
    d.expect(d.send(), ResponseCode.SYSTEM_BUSY, REJECT_REQUEST_REMARK)


@dataclass
class _Send:
    """One logical sync send of a producer: its attempts so far and the answer to the last one."""

    first_sent_at: int
    attempts: list[int]  # request ids, one per attempt
    answers: list[Response] = field(default_factory=list)  # the answer to each attempt, as they come
    outcome: Response | None = None  # the final answer (success, or a failure not retried)


def _retry_storm(profile: Profile, factory: BrokerFactory, limiter: RateLimitConfig) -> list[_Send]:
    """Source 004: a consumer that never acknowledges floods %RETRY%group with CONSUMER_SEND_MSG_BACK
    (three every 5 ms, 600/s) while a put takes 5 ms (200/s); a producer sends to TopicTest every 25 ms
    with the profile's sync retries. Returns the producer's sends that were settled."""
    config = java_broker(
        profile,
        executors=(SEND,),
        rate_limit=limiter,
        # The broker has been up for a while: the schedule's first run need not wait 1000 ms.
        fast_failure_initial_delay_ms=10,
    )
    d = Driver(config, factory)
    sends: list[_Send] = []
    pending: list[_Send] = []  # sends whose current attempt is unanswered
    due: list[_Send] = []  # sends to (re)try at this tick
    for tick in range(_STORM_TICKS):
        if tick % 5 == 0:
            due.append(_Send(d.now, []))
            sends.append(due[-1])
        for _ in range(3):
            d.send(RequestCode.CONSUMER_SEND_MSG_BACK, RETRY_TOPIC, io=1)
        for s in due:
            s.attempts.append(d.send(io=0))
            pending.append(s)
        due = []
        _serve(d, put_ms=5)
        d.advance(5)
        for s in list(pending):
            answer = d.response(s.attempts[-1])
            if answer is None:
                continue
            pending.remove(s)
            s.answers.append(answer)
            retry = answer.code is not ResponseCode.SUCCESS and sync_send_is_retried(profile, answer.code)
            if retry and len(s.attempts) < client.attempts(client.SendMode.SYNC):
                due.append(s)
            else:
                s.outcome = answer
    return sends


_STORM_TICKS = 70  # 350 ms of storm, in 5 ms ticks
_BACKLOG_MS = 100  # by then the backlog holds 200 ms of puts: a new send waits past the send queue's wait


def _serve(d: Driver, put_ms: int) -> None:
    """The send thread works for one tick: it takes queued tasks and runs each put, which holds the
    lock for ``put_ms`` (the clock moves only in :meth:`Driver.advance`)."""
    worker = WorkerId(SEND, 0)
    while d.run.spec_step_of(worker) is not None:
        if d.worker_stage(SEND, 0) is WorkerStage.IN_PUT_LOCK and d.now - d.run.spec.lock.begin_time_in_lock < put_ms:
            return
        d.step(worker)


def retry_storm_fails_every_topic(profile: Profile, factory: BrokerFactory) -> None:
    """Source 004 without the limiter: the retry topic's backlog makes every send to another topic fail
    with [TIMEOUT_CLEAN_QUEUE] (or [OVERLOAD]) once the backlog passes 200 ms; where the producer
    retries SYSTEM_BUSY (5.3.0+) the retries fail the same way."""
    sends = _retry_storm(profile, factory, RateLimitConfig())
    late = [a for s in sends if s.first_sent_at >= _BACKLOG_MS for a in s.answers]
    assert len(late) >= 3, f"only {len(late)} answers to sends made after the backlog formed"
    kinds = {a.kind for a in late}
    assert kinds <= {ResponseKind.TIMEOUT_CLEAN_QUEUE, ResponseKind.OVERLOAD}, f"late sends were answered {kinds}"
    assert ResponseKind.TIMEOUT_CLEAN_QUEUE in kinds
    retried = any(len(s.attempts) > 1 for s in sends)
    assert retried == sync_send_is_retried(profile, ResponseCode.SYSTEM_BUSY)


def retry_storm_with_rate_limit_serves_other_topics(profile: Profile, factory: BrokerFactory) -> None:
    """Source 004's fix: the per-topic limiter (100 QPS for CONSUMER_SEND_MSG_BACK) throttles the retry
    topic with [RateLimit], and every TopicTest send succeeds."""
    limiter = RateLimitConfig(enabled=True, default_qps=2000.0, send_msg_back_qps=100.0)
    settled = [s.outcome for s in _retry_storm(profile, factory, limiter) if s.outcome is not None]
    assert len(settled) >= 10, f"only {len(settled)} sends settled"
    failed = [o for o in settled if o.code is not ResponseCode.SUCCESS]
    assert not failed, f"sends to {TOPIC} failed: {failed[:3]}"


def _occupy_send_thread(d: Driver) -> None:
    """The only send thread takes a send and is descheduled before its pre-check: it holds no lock,
    so the store is never busy, and everything sent after it waits in the queue."""
    d.send()


def clean_expired_request_in_queue(profile: Profile, factory: BrokerFactory) -> None:
    """BrokerFastFailureTest.testCleanExpiredRequestInQueue: an empty queue stays empty; a head that is
    not a RequestTask stops the scan and stays; with maxWait 100, task A (100 ms old) is cleaned and
    the young task B behind it stops the scan (``>=``, head-only)."""
    d = Driver(java_broker(profile, executors=(SEND,)), factory)
    d.send()
    d.worker_until(SEND, 0, WorkerStage.IDLE)  # the send thread exists and is free
    d.run.take(OperatorSetsQueueWait(SEND, 1))
    d.advance(1000)  # the first run, on an empty queue
    assert d.run.spec.executor(SEND).queue == ()
    d.run.take(InternalTaskSubmitted(SEND))
    d.advance(10)
    assert len(d.run.spec.executor(SEND).queue) == 1, "a foreign head must stop the scan and stay"
    d.step(WorkerId(SEND, 0))  # "queue.clear()": the thread takes and runs it
    d.run.take(OperatorSetsQueueWait(SEND, 100))
    _occupy_send_thread(d)
    d.step(WorkerId(SEND, 0))  # it takes the send, and is descheduled
    a = d.send()
    d.tick(100)
    b = d.send()
    d.fast_failure_runs()
    d.expect(a, ResponseCode.SYSTEM_BUSY, timeout_remark(100, 1))
    assert d.response(b) is None and [t.request.id for t in d.run.spec.executor(SEND).queue] == [b]  # type: ignore[union-attr]


def clean_expired_custom_request_in_queue(profile: Profile, factory: BrokerFactory) -> None:
    """BrokerFastFailureTest.testCleanExpiredCustomRequestInQueue (5.3.0+): the ack queue's wait is read
    at every run: with 10 ms a queued ack is cleaned and stopRun; raised to 10000 ms, the next one
    stays queued for a second; lowered back, the next run cleans it."""
    ack = ExecutorName.ACK
    d = Driver(java_broker(profile, executors=(SEND, ack), threads={SEND: 1, ack: 1}), factory)
    d.send(RequestCode.ACK_MESSAGE)  # the ack thread takes it and is descheduled
    d.run.take(OperatorSetsQueueWait(ack, 10))
    first = d.send(RequestCode.ACK_MESSAGE)
    d.advance(1010)
    d.expect(first, ResponseCode.SYSTEM_BUSY, timeout_remark(1000, 0))
    d.run.take(OperatorSetsQueueWait(ack, 10000))
    second = d.send(RequestCode.ACK_MESSAGE)
    d.advance(1000)
    assert d.response(second) is None
    d.run.take(OperatorSetsQueueWait(ack, 10))
    d.advance(10)
    d.expect(second, ResponseCode.SYSTEM_BUSY, timeout_remark(1010, 0))


def head_not_expired_stops_timeout_cleanup(profile: Profile, factory: BrokerFactory) -> None:
    """rocketmq-rust's test, Java semantics: the head is fresh and the task behind it is old (IO thread
    0 stamped its task, then thread 1 submitted a newer one first); with wait 1000 neither is answered
    while the head is young (head-only scan, corner 21)."""
    d = Driver(java_broker(profile, executors=(SEND,)), factory)
    _occupy_send_thread(d)
    d.run.take(OperatorSetsQueueWait(SEND, 1000))
    d.arrive(io=0)
    d.create_task(io=0)
    old = d.run.spec.io_threads[0].request.id  # type: ignore[union-attr]
    d.tick(600)
    fresh = d.send(io=1)
    d.dispatch(io=0)  # the old task joins the queue behind the fresh one
    d.advance(500)  # the old task is 1100 ms old, the head 500
    assert d.response(old) is None and d.response(fresh) is None
    d.advance(500)
    d.expect(fresh, ResponseCode.SYSTEM_BUSY, timeout_remark(1000, 1))
    d.expect(old, ResponseCode.SYSTEM_BUSY, timeout_remark(1600, 0))


def head_expired_is_cancelled_with_timeout_response(profile: Profile, factory: BrokerFactory) -> None:
    """rocketmq-rust's test: wait 10, age 20: SYSTEM_BUSY [TIMEOUT_CLEAN_QUEUE], the task's opaque, stopRun."""
    d = Driver(java_broker(profile, executors=(SEND,)), factory)
    _occupy_send_thread(d)
    d.run.take(OperatorSetsQueueWait(SEND, 10))
    d.advance(1000)
    task = d.send()
    d.tick(20)
    d.fast_failure_runs()
    d.expect(task, ResponseCode.SYSTEM_BUSY, timeout_remark(20, 0))


def running_task_is_not_cancelled_by_cleanup(profile: Profile, factory: BrokerFactory) -> None:
    """rocketmq-rust's test: a task a worker already took is past the queue's reach: fast failure never
    answers it, and the worker's SUCCESS is its only answer."""
    d = Driver(java_broker(profile, executors=(SEND,)), factory)
    running = d.send()
    d.advance(1500)
    assert d.response(running) is None
    d.worker_until(SEND, 0, WorkerStage.IDLE)
    d.expect(running, ResponseCode.SUCCESS, None)


def foreign_head_blocks_the_scan(profile: Profile, factory: BrokerFactory) -> None:
    """rocketmq-rust skips a completed head and cleans the expired task behind it (a divergence); in
    Java a head castRunnable cannot unwrap ends the scan, so the expired send stays (corner 22)."""
    d = Driver(java_broker(profile, executors=(SEND,)), factory)
    _occupy_send_thread(d)
    d.run.take(InternalTaskSubmitted(SEND))
    stuck = d.send()
    d.advance(1500)
    assert d.response(stuck) is None and len(d.run.spec.executor(SEND).queue) == 2


def page_cache_busy_cleans_send_queue_without_waiting(profile: Profile, factory: BrokerFactory) -> None:
    """rocketmq-rust's test: with a send wait of 60000 ms, a busy store still drains the send queue with
    [PCBUSY_CLEAN_QUEUE] (phase 1 has no age check, corner 13), and leaves the pull queue alone."""
    pull = ExecutorName.PULL
    d = Driver(java_broker(profile, executors=(SEND, pull), threads={SEND: 1, pull: 1}), factory)
    d.run.take(OperatorSetsQueueWait(SEND, 60000))
    d.send()
    d.hold_put_lock()
    d.send(RequestCode.PULL_MESSAGE)  # the pull thread takes it and is descheduled
    pulled = d.send(RequestCode.PULL_MESSAGE)
    queued = d.send()
    d.tick(1001)
    d.fast_failure_runs()
    d.expect(queued, ResponseCode.SYSTEM_BUSY, pcbusy_remark(1001, 0))
    assert d.response(pulled) is None and len(d.run.spec.executor(pull).queue) == 1


def timeout_cleanup_cleans_every_expired_head_in_one_run(profile: Profile, factory: BrokerFactory) -> None:
    """rocketmq-rust caps a scan at 256 heads per queue per run; Java has no cap: with wait 0, all
    257 queued sends are answered [TIMEOUT_CLEAN_QUEUE] by one run, in queue order."""
    d = Driver(java_broker(profile, executors=(SEND,)), factory)
    _occupy_send_thread(d)
    d.run.take(OperatorSetsQueueWait(SEND, 0))
    queued = [d.send() for _ in range(257)]
    d.advance(1000)
    start = d.run.responses.index(next(r for r in d.run.responses if r.request_id == queued[0]))
    answered = d.run.responses[start : start + 257]
    assert [r.request_id for r in answered] == queued
    assert answered[-1].remark == timeout_remark(1000, 0)
    assert sum(1 for s in d.run.steps if isinstance(s.action, FastFailureStartsRun)) == 1


def disabled_switch_ticks_but_does_not_clean(profile: Profile, factory: BrokerFactory) -> None:
    """rocketmq-rust's test, Java semantics: with brokerFastFailureEnable off the scheduler still ticks
    (each run is skipped) and cleans nothing; switched back on, the next run cleans (4.2.0+)."""
    d = Driver(java_broker(profile, executors=(SEND,)), factory)
    _occupy_send_thread(d)
    d.run.take(OperatorSetsFastFailureEnable(False))
    old = d.send()
    d.advance(1500)
    assert d.response(old) is None and d.run.spec.fast_failure_phase is FastFailurePhase.IDLE
    d.run.take(OperatorSetsFastFailureEnable(True))
    d.advance(10)
    d.expect(old, ResponseCode.SYSTEM_BUSY, timeout_remark(1510, 0))


def cancelled_task_does_nothing(profile: Profile, factory: BrokerFactory) -> None:
    """RequestTask.run with stopRun set runs nothing and answers nothing (corner 26). No broker path
    leaves a stopRun task in a queue, so, like BrokerFastFailureTest, this puts one there by hand:
    the spec state and the reference's queue both get a cancelled task at the head."""
    d = Driver(java_broker(profile, executors=(SEND,)), factory)
    d.send()
    d.worker_until(SEND, 0, WorkerStage.IDLE)
    broker = d.run.broker
    assert isinstance(broker, Broker), "this scenario reaches into reference.broker.Broker's queue"
    request_id = d.run.spec.next_request_id
    task = RequestTask(RemotingCommand(request_id, RequestCode.SEND_MESSAGE, TOPIC, False), d.now)
    task.stop_run = True
    broker.executors[SEND].queue.append(FutureTaskExt(task))
    broker.remoting.next_request_id += 1
    cancelled = state.RequestTask(state.Request(request_id, RequestCode.SEND_MESSAGE, TOPIC, False), d.now, stop_run=True)
    spec_send = d.run.spec.executor(SEND)
    d.run.adopt(
        replace(
            state.with_executor(d.run.spec, replace(spec_send, queue=(cancelled,))),
            next_request_id=request_id + 1,
        )
    )
    d.step(WorkerId(SEND, 0))
    assert d.response(request_id) is None and d.run.last is not None and not d.run.last.spec_outputs.started


@dataclass(frozen=True)
class Scenario:
    """A named scenario and the profiles it applies to."""

    name: str
    run: Callable[[Profile, BrokerFactory], None]
    versions: tuple[str, ...]

    @property
    def doc(self) -> str:
        return (self.run.__doc__ or "").split("\n\n")[0]


_ALL = tuple(sorted(PROFILES))
SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(f.__name__, f, _ALL)
        for f in (
            page_cache_busy_rejects_and_drains,
            full_send_queue_overloads,
            slow_put_answers_pc_synchronized,
            send_queue_backed_up_past_200ms_times_out,
            pool_of_one_rejects_once_lent,
            retry_storm_fails_every_topic,
            retry_storm_with_rate_limit_serves_other_topics,
            clean_expired_request_in_queue,
            head_not_expired_stops_timeout_cleanup,
            head_expired_is_cancelled_with_timeout_response,
            running_task_is_not_cancelled_by_cleanup,
            foreign_head_blocks_the_scan,
            page_cache_busy_cleans_send_queue_without_waiting,
            disabled_switch_ticks_but_does_not_clean,
            cancelled_task_does_nothing,
        )
    )
}
# The scan cap is a rust-port divergence, and BrokerFastFailure's loop is the same in every profile;
# 257 queued sends cost seconds of lockstep checks, so one profile runs it.
SCENARIOS["timeout_cleanup_cleans_every_expired_head_in_one_run"] = Scenario(
    "timeout_cleanup_cleans_every_expired_head_in_one_run", timeout_cleanup_cleans_every_expired_head_in_one_run, ("4.9.8",)
)
SCENARIOS["clean_expired_custom_request_in_queue"] = Scenario(
    "clean_expired_custom_request_in_queue",
    clean_expired_custom_request_in_queue,
    tuple(v for v in _ALL if any(n is ExecutorName.ACK for n, _ in PROFILES[v].cleaned_queues)),
)
