"""A reference broker written the way RocketMQ's Java broker is, stepped one atomic action at a time.

:class:`Broker` is BrokerController: it owns the clock and the live broker configuration, builds
the parts the Java broker is made of, and drives their threads one step at a time. The parts,
each a class in its own module as in Java:

- :class:`~reference.remoting.NettyRemotingServer`: the handler threads' dispatch, the processor
  table, the closure a worker runs, the channels answers go out on;
- :class:`~reference.ratelimithandler.RateLimitHandler`: source 004's per-topic limiter;
- :class:`~reference.processors.SendMessageProcessor`: rejectRequest, the busy pre-check, the put;
- :class:`~reference.executor.BrokerFixedThreadPoolExecutor`: each executor's queue and workers;
- :class:`~reference.messagestore.DefaultMessageStore`: isOSPageCacheBusy, pool deficiency;
- :class:`~reference.commitlog.CommitLog`: the put lock, ``beginTimeInLock``, the mapped files;
- :class:`~reference.store.TransientStorePool`: the write buffers, borrowed and returned;
- :class:`~reference.commitservice.CommitRealTimeService`: commits, and gives back full files' buffers;
- :class:`~reference.fastfailure.BrokerFastFailure`: the fixed-rate drain and timeout cleaning.

Each thread is a Python generator written as the Java thread's loop; ``next()`` runs it to its
next atomic step, which yields the spec action (the actors' modules) it performed, or None when
the thread cannot move. Faults are thrown into (or flagged for) the thread they happen on.
Nothing here imports the spec's transition functions; :meth:`Broker.observe` maps this state to
a :class:`spec.state.BrokerState` so that a test can compare the two after every step.

A decision point is a small method of the part it belongs to, so that a mutant is a subclass of
one part overriding one method; :meth:`Broker.with_part` builds the broker that uses it
(:mod:`properties.mutants`). Note: no queued task ever has stopRun set (fast failure sets it only
after removing the task), so a mutant of ``task_should_run`` alone cannot change behaviour; the
spec's WorkerDiscardsCancelledTask is unreachable for the same reason.

A broker holds generators, so it cannot be copied or pickled: replay its inputs instead.
:mod:`reference.lockstep` names its threads and maps a spec action onto the call that takes it.

Each part cites its sources as links to apache/rocketmq at a release tag (docs/sources.md).
"""

from __future__ import annotations

from typing import ClassVar

from reference.commitlog import CommitLog
from reference.commitservice import CommitRealTimeService
from reference.executor import BrokerFixedThreadPoolExecutor, WorkerThread
from reference.fastfailure import BrokerFastFailure, FastFailureStage
from reference.messagestore import DefaultMessageStore
from reference.processors import SendMessageProcessor
from reference.ratelimit import TokenBucketRateLimiter
from reference.ratelimithandler import RateLimitHandler
from reference.recorder import Recorder
from reference.remoting import IoThreadContext, NettyRemotingServer
from reference.requests import InternalTask, QueueItem, RemotingCommand, RequestTask
from reference.store import TransientStorePool
from reference.threads import InjectedFault, ThreadBody
from spec import environment, state
from spec.actors import Action
from spec.config import BrokerConfig
from spec.limiter import TokenBucket
from spec.profiles import ExecutorName
from spec.putlock import HA_SERVICE, PutLock
from spec.remoting import RequestArrives


class StepRefused(Exception):
    """The reference cannot perform this input now (the thread is busy, the lock is held, ...)."""


_OBSERVED_PHASE = {
    FastFailureStage.BETWEEN_RUNS: state.FastFailurePhase.IDLE,
    FastFailureStage.PCBUSY_DRAIN: state.FastFailurePhase.DRAINING_BUSY,
    FastFailureStage.TIMEOUT_CLEAN: state.FastFailurePhase.CLEANING,
}

#: The parts a mutant may replace: the attribute naming the class, and the class it must extend.
PART_SLOTS: tuple[tuple[str, type], ...] = (
    ("remoting_server_class", NettyRemotingServer),
    ("rate_limit_handler_class", RateLimitHandler),
    ("send_message_processor_class", SendMessageProcessor),
    ("executor_class", BrokerFixedThreadPoolExecutor),
    ("message_store_class", DefaultMessageStore),
    ("commit_log_class", CommitLog),
    ("transient_store_pool_class", TransientStorePool),
    ("commit_service_class", CommitRealTimeService),
    ("fast_failure_class", BrokerFastFailure),
)


class Broker:
    """One broker under one configuration; its clock moves only by :meth:`clock_advances`."""

    remoting_server_class: ClassVar[type[NettyRemotingServer]] = NettyRemotingServer
    rate_limit_handler_class: ClassVar[type[RateLimitHandler]] = RateLimitHandler
    send_message_processor_class: ClassVar[type[SendMessageProcessor]] = SendMessageProcessor
    executor_class: ClassVar[type[BrokerFixedThreadPoolExecutor]] = BrokerFixedThreadPoolExecutor
    message_store_class: ClassVar[type[DefaultMessageStore]] = DefaultMessageStore
    commit_log_class: ClassVar[type[CommitLog]] = CommitLog
    transient_store_pool_class: ClassVar[type[TransientStorePool]] = TransientStorePool
    commit_service_class: ClassVar[type[CommitRealTimeService]] = CommitRealTimeService
    fast_failure_class: ClassVar[type[BrokerFastFailure]] = BrokerFastFailure

    @classmethod
    def with_part(cls, part: type) -> type[Broker]:
        """The broker class that builds ``part`` in place of the class it extends (a mutant's broker)."""
        for slot, base in PART_SLOTS:
            if issubclass(part, base):
                return type(part.__name__, (cls,), {slot: part, "__doc__": part.__doc__})
        raise TypeError(f"{part.__name__} extends none of the broker's parts")

    def __init__(self, config: BrokerConfig, *, recorder: Recorder | None = None) -> None:
        config.validate()
        self.config = config
        self.profile = config.profile
        self.recorder = recorder
        self.now = config.start_time_ms  # SystemClock.now()
        # The BrokerConfig values an operator may change while the broker runs.
        self.fast_failure_enable = config.fast_failure_enable  # brokerFastFailureEnable, read each run
        self.queue_waits = config.queue_waits  # waitTimeMillsIn*Queue, in cleaning order, read at each scan
        self.next_foreign_id = 1  # id of the next task broker code submits

        self.message_store = self.message_store_class(self)
        self.rate_limit_handler = self.rate_limit_handler_class(self)
        self.remoting = self.remoting_server_class(self)
        self.executors = {
            e.name: self.executor_class(e.name, e.threads, e.capacity, self.remoting.run_task) for e in config.executors
        }
        self.fast_failure = self.fast_failure_class(self)
        self.outputs = state.NO_OUTPUTS  # the outputs of the last step taken

    # ================================================================ the threads' steps

    def step_io_thread(self, io_thread: int) -> Action | None:
        """The remoting thread's next step on its current request."""
        self._io_thread(io_thread)
        return self._step(self.remoting.bodies[io_thread])

    def step_worker(self, executor: ExecutorName, worker: int) -> Action | None:
        """The worker's next step; None also for a thread the pool has not started yet."""
        pool = self._executor(executor)
        if not 0 <= worker < pool.core_pool_size:
            raise StepRefused(f"executor {executor.value} has {pool.core_pool_size} threads, not a worker {worker}")
        if worker >= len(pool.workers):
            return None
        return self._step(pool.bodies[worker])

    def step_commit_service(self) -> Action | None:
        """CommitRealTimeService's next step (it does not exist when the pool is disabled)."""
        service = self.message_store.commit_service
        return None if service is None else self._step(service.body)

    def step_fast_failure(self) -> Action | None:
        """BrokerFastFailureScheduledThread's next step."""
        return self._step(self.fast_failure.body)

    def _step(self, body: ThreadBody) -> Action | None:
        self.remoting.channels.begin_step()
        action = next(body)
        if action is not None:
            self._record(action)
        return action

    def _record(self, action: Action) -> None:
        """The step that took ``action`` is over: keep its outputs, and report it."""
        self.outputs = self.remoting.channels.step_outputs()
        if self.recorder is not None:
            self.recorder.record(action, self.outputs.responses, self.now)

    def _input(self, action: Action) -> None:
        """An environment input or fault that changed the broker by itself is a step of its own."""
        self.remoting.channels.begin_step()
        self._record(action)

    @property
    def responses(self) -> list[state.Response]:
        """Every response written, in order."""
        return list(self.remoting.channels.responses)

    # ================================================================ environment inputs

    def request_arrives(self, io_thread: int, code: int, topic: str, oneway: bool) -> None:
        """A request is decoded on an idle remoting thread (NettyRemotingAbstract.processMessageReceived)."""
        io = self._io_thread(io_thread)
        if io.command is not None:
            raise StepRefused(f"IO thread {io_thread} is still handling request {io.command.opaque}")
        found = self.remoting.find_processor(code)
        if found is not None and found[1] not in self.executors:
            raise StepRefused(f"code {code} goes to the {found[1].value} executor, which this configuration leaves out")
        io.command = RemotingCommand(self.remoting.next_request_id, code, topic, oneway)
        self.remoting.next_request_id += 1
        self._input(RequestArrives(io_thread, code, topic, oneway))

    def clock_advances(self, ms: int) -> None:
        """Time passes (the wall clock never steps back here)."""
        if ms <= 0:
            raise StepRefused(f"the clock only moves forward; got ms={ms}")
        self.now += ms
        self._input(environment.ClockAdvances(ms))

    def operator_sets_fast_failure_enable(self, enabled: bool) -> None:
        """updateBrokerConfig brokerFastFailureEnable; the next run reads it."""
        if self.fast_failure_enable == enabled:
            raise StepRefused(f"brokerFastFailureEnable is already {enabled}")
        self.fast_failure_enable = enabled
        self._input(environment.OperatorSetsFastFailureEnable(enabled))

    def operator_sets_queue_wait(self, queue: ExecutorName, wait_ms: int) -> None:
        """updateBrokerConfig waitTimeMillsIn<queue>Queue; the next scan of that queue reads it."""
        if not any(q is queue for q, _ in self.queue_waits):
            raise StepRefused(f"the {queue.value} queue is not cleaned by fast failure here")
        if self.fast_failure.wait_for(queue) == wait_ms:
            raise StepRefused(f"the {queue.value} queue's wait is already {wait_ms} ms")
        self.queue_waits = tuple((q, wait_ms if q is queue else w) for q, w in self.queue_waits)
        self._input(environment.OperatorSetsQueueWait(queue, wait_ms))

    def internal_task_submitted(self, executor: ExecutorName) -> None:
        """Broker code submits a plain FutureTask to an executor whose threads all exist."""
        pool = self._executor(executor)
        if pool.should_start_worker():
            raise StepRefused(
                f"executor {executor.value} has started {len(pool.workers)} of {pool.core_pool_size} threads: "
                "the task would run on a new thread, which the spec does not model"
            )
        if not pool.queue_has_room():
            raise StepRefused(f"executor {executor.value}'s queue is full: submit would throw RejectedExecutionException")
        pool.queue.append(InternalTask(self.next_foreign_id))
        self.next_foreign_id += 1
        self._input(environment.InternalTaskSubmitted(executor))

    def ha_service_acquires_put_lock(self) -> None:
        """CommitLog.appendData takes the put lock and never stamps beginTimeInLock (corner 5)."""
        lock = self.message_store.commit_log.put_message_lock
        if not lock.try_lock(HA_SERVICE):
            raise StepRefused(f"the put lock is held by {lock.holder}")
        self._input(environment.HaServiceAcquiresPutLock())

    def ha_service_releases_put_lock(self) -> None:
        """appendData's finally: unlock."""
        lock = self.message_store.commit_log.put_message_lock
        if lock.holder != HA_SERVICE:
            raise StepRefused(f"the HA service does not hold the put lock (holder: {lock.holder})")
        lock.unlock(HA_SERVICE)
        self._input(environment.HaServiceReleasesPutLock())

    def worker_throws_inside_lock(self, executor: ExecutorName, worker: int) -> None:
        """Fault: an exception escapes the put's critical section of this worker."""
        thread = self._started_worker(executor, worker)
        if not thread.in_put_lock:
            raise StepRefused(f"worker {executor.value}[{worker}] is not inside the put lock")
        self.remoting.channels.begin_step()
        action = self.executors[executor].bodies[worker].throw(InjectedFault(f"{executor.value}[{worker}]"))
        assert action is not None, "a worker that caught an exception answers it in the same step"
        self._record(action)

    def rate_limit_handler_fails_open(self, io_thread: int) -> None:
        """Fault: the limiter's own executor rejects the task; the request passes on unlimited."""
        io = self._io_thread(io_thread)
        if io.command is None or io.passed_limiter or not self.rate_limit_handler.rate_limit_applies(io.command):
            raise StepRefused(f"IO thread {io_thread} has no request waiting at the rate-limit handler")
        io.limiter_pool_rejects = True
        self.step_io_thread(io_thread)

    def _io_thread(self, index: int) -> IoThreadContext:
        threads = self.remoting.io_threads
        if not 0 <= index < len(threads):
            raise StepRefused(f"there are {len(threads)} IO threads, not an IO thread {index}")
        return threads[index]

    def _executor(self, name: ExecutorName) -> BrokerFixedThreadPoolExecutor:
        try:
            return self.executors[name]
        except KeyError:
            raise StepRefused(f"this configuration has no {name.value} executor") from None

    def _started_worker(self, executor: ExecutorName, worker: int) -> WorkerThread:
        pool = self._executor(executor)
        if not 0 <= worker < len(pool.workers):
            raise StepRefused(f"executor {executor.value} has started {len(pool.workers)} threads, not a worker {worker}")
        return pool.workers[worker]

    # ================================================================ observation

    def observe(self) -> state.BrokerState:
        """The refinement mapping: this broker as a spec state."""
        commit_log = self.message_store.commit_log
        fast_failure = self.fast_failure
        return state.BrokerState(
            now=self.now,
            next_request_id=self.remoting.next_request_id,
            next_foreign_id=self.next_foreign_id,
            io_threads=tuple(_observe_io_thread(io) for io in self.remoting.io_threads),
            executors=tuple(
                state.Executor(
                    name=pool.name,
                    queue=tuple(_observe_item(item) for item in pool.queue),
                    workers=tuple(_observe_worker(w) for w in pool.workers),
                )
                for pool in self.executors.values()
            ),
            lock=PutLock(holder=commit_log.put_message_lock.holder, begin_time_in_lock=commit_log.begin_time_in_lock),
            files=tuple(
                state.MappedFile(f.index, f.wrote_position, f.committed_position, f.write_buffer)
                for f in commit_log.mapped_file_queue.mapped_files
            ),
            available_buffers=tuple(self.message_store.transient_store_pool.available_buffers),
            fast_failure_phase=_OBSERVED_PHASE[fast_failure.stage],
            fast_failure_queue=fast_failure.queue_index,
            fast_failure_scan_wait=fast_failure.scan_wait,
            fast_failure_next_run=fast_failure.next_run,
            fast_failure_enable=self.fast_failure_enable,
            queue_waits=self.queue_waits,
            buckets=tuple(
                _observe_bucket(resource, limiter) for resource, limiter in sorted(self.rate_limit_handler.rate_limiter_map.items())
            ),
        )


def _observe_request(command: RemotingCommand) -> state.Request:
    return state.Request(command.opaque, command.code, command.topic, command.oneway)


def _observe_task(task: RequestTask) -> state.RequestTask:
    return state.RequestTask(_observe_request(task.command), task.create_timestamp, task.stop_run)


def _observe_item(item: QueueItem) -> state.QueueElement:
    if isinstance(item, InternalTask):
        return state.ForeignTask(item.task_id)
    return _observe_task(item.runnable)


def _observe_io_thread(io: IoThreadContext) -> state.IoThread:
    if io.command is None:
        return state.IoThread(state.IoStage.IDLE)
    request = _observe_request(io.command)
    if io.task is not None:
        return state.IoThread(state.IoStage.TASK_CREATED, request, _observe_task(io.task))
    return state.IoThread(state.IoStage.ADMITTED if io.passed_limiter else state.IoStage.RECEIVED, request)


def _observe_worker(worker: WorkerThread) -> state.Worker:
    if worker.task is None:
        return state.Worker(state.WorkerStage.IDLE)
    if worker.in_put_lock:
        stage = state.WorkerStage.IN_PUT_LOCK
    elif worker.passed_put_check:
        stage = state.WorkerStage.PASSED_PUT_CHECK
    else:
        stage = state.WorkerStage.TAKEN
    return state.Worker(stage, _observe_task(worker.task))


def _observe_bucket(resource: str, limiter: TokenBucketRateLimiter) -> state.Bucket:
    return state.Bucket(
        resource=resource,
        created_at=limiter.created_at_ms,
        bucket=TokenBucket(
            stable_interval_micros=limiter.stable_interval_micros,
            max_permits=limiter.max_permits,
            stored_permits=limiter.stored_permits,
            next_free_ticket_micros=limiter.next_free_ticket_micros,
            circuit_open=limiter.circuit_breaker_open,
            last_need_wait_micros=limiter.last_need_wait_micros,
        ),
    )
