"""A reference broker written the way RocketMQ's Java broker is, stepped one atomic action at a time.

It has what the broker has: a processor table, fixed thread pools with bounded FIFO queues of
mutable RequestTasks, a commit log with a put lock (spin or reentrant, as the profile says) and
a ``beginTimeInLock`` field, mapped files lending TransientStorePool buffers, a commit service,
BrokerFastFailure on a fixed-rate schedule, and source 004's per-topic rate limiter. Each thread
is a Python generator written as the Java thread's loop; ``next()`` runs it to its next atomic
step, which yields the spec action (the actors' modules) it performed, or None when the thread
cannot move. Faults are thrown into (or flagged for) the thread they happen on. Nothing here
imports the spec's transition functions; :meth:`Broker.observe` maps this state to a
:class:`spec.state.BrokerState` so that a test can compare the two after every step.

Decision points are small methods, so that a mutant is a subclass overriding exactly one:

=======================================  ==========================================================
``is_os_page_cache_busy()``              ``timeout < now - beginTimeInLock < 10^7``, idle when 0
``is_transient_store_pool_deficient()``  no buffer available while the pool is enabled
``reject_request(processor)``            SendMessageProcessor.rejectRequest: busy or deficient
``reject_request_remark()``              ``[REJECTREQUEST]system busy, ...``
``oneway_answer_written(writer, k)``     whether a response of kind ``k`` reaches a oneway client
``should_start_worker(executor)``        ``workerCount < corePoolSize``: submit starts a thread
``queue_has_room(executor)``             ``LinkedBlockingQueue.offer`` succeeds
``task_should_run(task)``                ``RequestTask.run``: ``if (!stopRun)`` (note 1)
``process_request(processor, cmd)``      SUCCESS, or the admin processor's unknown-code answer
``page_cache_busy_answer(code)``         the [PC_SYNCHRONIZED] code and remark per profile
``reset_begin_time_on_exception()``      CommitLog's ``finally`` also resets beginTimeInLock
``create_mapped_file()``                 a new last file borrowing a buffer; unbuffered files leave
``borrow_buffer()``                      ``pollFirst`` from the pool's head
``return_buffer(buffer)``                ``offerFirst`` to the pool's head
``file_to_commit()``                     the oldest file with uncommitted bytes in its buffer
``buffer_due_back(file)``                ``committedPosition == fileSize``
``next_fast_failure_run(scheduled)``     fixed rate: the previous slot + period
``fast_failure_switch_on()``             brokerFastFailureEnable (always on before 4.2.0)
``phase_one_takes(head)``                phase 1 polls the send queue's head whatever its age
``fast_failure_now(run_started_at)``     phase 2 reads the clock afresh for every head
``find_expired(queue, wait, now)``       head-only: a young, foreign or stopRun head ends the scan
``is_expired(task, now, wait)``          ``now - createTimestamp >= maxWait``
``remove_expired(queue, head)``          phase 2 removes an expired head before setting stopRun
``fast_failure_scan_limit()``            no cap per queue per run (the rust port caps at 256)
``reported_queue_size(queue)``           the size after removal, in both cleaning remarks
``rate_limit_applies(command)``          sends with a topic go through the limiter
``create_rate_limiter(qps)``             a new topic's TokenBucketRateLimiter
=======================================  ==========================================================

Note 1: no queued task ever has stopRun set (fast failure sets it only after removing the task),
so a mutant of ``task_should_run`` alone cannot change behaviour; the spec's
WorkerDiscardsCancelledTask is unreachable for the same reason.

A broker holds generators, so it cannot be copied or pickled: replay its inputs instead.
:mod:`reference.lockstep` names its threads and maps a spec action onto the call that takes it.

Sources: as cited on each method; paths abbreviated as in ``../shared/rocketmq/semantics.md``.
"""

from __future__ import annotations

import enum
from collections import deque

from reference.ratelimit import TokenBucketRateLimiter
from reference.recorder import Recorder
from reference.remoting import (
    ADMIN_BROKER_PROCESSOR,
    FixedThreadPoolExecutor,
    FutureTaskExt,
    InternalTask,
    IoThreadContext,
    Processor,
    QueueItem,
    RemotingCommand,
    RequestTask,
    ThreadBody,
    WorkerThread,
    cast_runnable,
    processor_table,
)
from reference.store import (
    MappedFile,
    MappedFileQueue,
    PutMessageLock,
    PutMessageReentrantLock,
    PutMessageSpinLock,
    TransientStorePool,
)
from spec import state
from spec.actors import Action
from spec.commitservice import CommitServiceCommits, CommitServiceReturnsBuffer
from spec.environment import (
    ClockAdvances,
    HaServiceAcquiresPutLock,
    HaServiceReleasesPutLock,
    InternalTaskSubmitted,
    OperatorSetsFastFailureEnable,
    OperatorSetsQueueWait,
)
from spec.fastfailure import (
    FastFailureCleansExpiredHead,
    FastFailureDrainsBusySendQueue,
    FastFailureDropsForeignElement,
    FastFailureEndsBusyDrain,
    FastFailureSkipsRun,
    FastFailureStartsRun,
    FastFailureStopsAtHead,
)
from spec.remoting import (
    DispatchAnswersNotSupported,
    DispatchCreatesTask,
    DispatchQueuesTask,
    DispatchRejectsOverload,
    DispatchRejectsRequest,
    DispatchStartsWorker,
    RateLimitHandlerAdmits,
    RateLimitHandlerFailsOpen,
    RateLimitHandlerThrottles,
    RequestArrives,
)
from spec.workers import (
    WorkerAcquiresPutLock,
    WorkerAppendsAndUnlocks,
    WorkerCreatesMappedFile,
    WorkerDiscardsCancelledTask,
    WorkerFindsPageCacheBusy,
    WorkerPassesPutCheck,
    WorkerProcessesRequest,
    WorkerRunsForeignTask,
    WorkerTakesTask,
    WorkerThrowsInsideLock,
)
from spec.codes import (
    OVERLOAD_REMARK,
    PC_SYNCHRONIZED_REMARK,
    PUT_CODES,
    REJECT_REQUEST_REMARK,
    RequestCode,
    ResponseCode,
    ResponseKind,
    not_supported_remark,
    pcbusy_remark,
    rate_limit_remark,
    timeout_remark,
)
from spec.config import BUSY_UPPER_BOUND_MS, BrokerConfig
from spec.limiter import TokenBucket
from spec.profiles import ExecutorName, PutLockKind
from spec.putlock import HA_SERVICE, PutLock

INTEGER_MAX_VALUE = 2**31 - 1


class StepRefused(Exception):
    """The reference cannot perform this input now (the thread is busy, the lock is held, ...)."""


class InjectedFault(Exception):
    """An exception thrown inside the put lock's critical section (fault injection)."""


class Writer(enum.Enum):
    """Which code path writes a response; each has its own rule for oneway requests."""

    DISPATCH = "processRequestCommand on the IO thread"
    CALLBACK = "the processor's response callback on the worker"
    DIRECT = "channel.writeAndFlush: RequestTask.returnResponse, the rate-limit handler"


class FastFailureStage(enum.Enum):
    """Where BrokerFastFailureScheduledThread is."""

    BETWEEN_RUNS = "between runs"
    PCBUSY_DRAIN = "phase 1: while (isOSPageCacheBusy()) poll the send queue"
    TIMEOUT_CLEAN = "phase 2: cleanExpiredRequestInQueue, queue by queue"


_OBSERVED_PHASE = {
    FastFailureStage.BETWEEN_RUNS: state.FastFailurePhase.IDLE,
    FastFailureStage.PCBUSY_DRAIN: state.FastFailurePhase.DRAINING_BUSY,
    FastFailureStage.TIMEOUT_CLEAN: state.FastFailurePhase.CLEANING,
}


class Broker:
    """One broker under one configuration; its clock moves only by :meth:`clock_advances`."""

    def __init__(self, config: BrokerConfig, *, recorder: Recorder | None = None) -> None:
        config.validate()
        self.config = config
        self.profile = config.profile
        self.recorder = recorder
        self.now = config.start_time_ms  # SystemClock.now()

        # Remoting: the processor table, the default processor, the Netty handler threads.
        self.processor_table = processor_table(self.profile)
        self.default_processor: tuple[Processor, ExecutorName] | None = (
            (ADMIN_BROKER_PROCESSOR, ExecutorName.ADMIN) if config.default_processor_registered else None
        )
        self.next_request_id = 1  # the opaque of the next request decoded
        self.io_threads = [IoThreadContext(i) for i in range(config.io_threads)]
        self._io_bodies = [self._netty_handler_thread(io) for io in self.io_threads]

        # The executors, in the configuration's order.
        self.executors = {e.name: FixedThreadPoolExecutor(e.name, e.threads, e.capacity) for e in config.executors}
        self._worker_bodies: dict[tuple[ExecutorName, int], ThreadBody] = {}
        self.next_foreign_id = 1  # id of the next task broker code submits

        # The store: CommitLog's put lock and beginTimeInLock, its files, the pool, the commit service.
        self.put_message_lock: PutMessageLock = (
            PutMessageReentrantLock() if self.profile.put_lock is PutLockKind.REENTRANT else PutMessageSpinLock()
        )
        self.begin_time_in_lock = 0  # CommitLog.beginTimeInLock; 0 = no writer in the critical section
        self.mapped_file_queue = MappedFileQueue()
        self.transient_store_pool = TransientStorePool(config.transient_store_pool_size)
        self._commit_service: ThreadBody | None = None
        if config.pool_enabled:  # init() and CommitRealTimeService run only with the pool enabled
            self.transient_store_pool.init()
            self._commit_service = self._commit_real_time_service()

        # BrokerFastFailure: scheduleAtFixedRate(task, initialDelay, period).
        self.fast_failure_enable = config.fast_failure_enable  # brokerFastFailureEnable, read each run
        self.queue_waits = config.queue_waits  # waitTimeMillsIn*Queue, in cleaning order, read at each scan
        self.fast_failure_next_run = config.start_time_ms + config.fast_failure_initial_delay_ms
        self.fast_failure_stage = FastFailureStage.BETWEEN_RUNS
        self.fast_failure_queue_index = 0  # phase 2: the queue being scanned
        self.fast_failure_scan_wait = 0  # phase 2: the maxWait argument of the current scan
        self._fast_failure = self._fast_failure_scheduled_thread()

        # Source 004's RateLimitHandler.rateLimiterMap.
        self.rate_limiter_map: dict[str, TokenBucketRateLimiter] = {}

        # What the broker wrote to its channels, and what the current step did besides
        # (requests finished without a response, processors begun): the step's outputs.
        self._responses: list[state.Response] = []
        self._step_mark = 0  # index in _responses where the current step began
        self._finished_silently: list[int] = []
        self._started: list[int] = []
        self.outputs = state.NO_OUTPUTS  # the outputs of the last step taken

    # ================================================================ the threads' steps

    def step_io_thread(self, io_thread: int) -> Action | None:
        """The remoting thread's next step on its current request."""
        self._io_thread(io_thread)
        return self._step(self._io_bodies[io_thread])

    def step_worker(self, executor: ExecutorName, worker: int) -> Action | None:
        """The worker's next step; None also for a thread the pool has not started yet."""
        pool = self._executor(executor)
        if not 0 <= worker < pool.core_pool_size:
            raise StepRefused(f"executor {executor.value} has {pool.core_pool_size} threads, not a worker {worker}")
        if worker >= len(pool.workers):
            return None
        return self._step(self._worker_bodies[(executor, worker)])

    def step_commit_service(self) -> Action | None:
        """CommitRealTimeService's next step (it does not exist when the pool is disabled)."""
        return None if self._commit_service is None else self._step(self._commit_service)

    def step_fast_failure(self) -> Action | None:
        """BrokerFastFailureScheduledThread's next step."""
        return self._step(self._fast_failure)

    def _step(self, body: ThreadBody) -> Action | None:
        self._begin_step()
        action = next(body)
        if action is not None:
            self._record(action)
        return action

    def _begin_step(self) -> None:
        self._step_mark = len(self._responses)
        self._finished_silently.clear()
        self._started.clear()

    def _record(self, action: Action) -> None:
        """The step that took ``action`` is over: keep its outputs, and report it."""
        written = tuple(self._responses[self._step_mark :])
        self.outputs = state.Outputs(written, tuple(self._finished_silently), tuple(self._started))
        if self.recorder is not None:
            self.recorder.record(action, written, self.now)

    # ================================================================ environment inputs

    def request_arrives(self, io_thread: int, code: RequestCode, topic: str, oneway: bool) -> None:
        """A request is decoded on an idle remoting thread (NettyRemotingAbstract.processMessageReceived)."""
        io = self._io_thread(io_thread)
        if io.command is not None:
            raise StepRefused(f"IO thread {io_thread} is still handling request {io.command.opaque}")
        found = self.find_processor(code)
        if found is not None and found[1] not in self.executors:
            raise StepRefused(f"code {code.name} goes to the {found[1].value} executor, which this configuration leaves out")
        io.command = RemotingCommand(self.next_request_id, code, topic, oneway)
        self.next_request_id += 1
        self._begin_step()
        self._record(RequestArrives(io_thread, code, topic, oneway))

    def clock_advances(self, ms: int) -> None:
        """Time passes (the wall clock never steps back here)."""
        if ms <= 0:
            raise StepRefused(f"the clock only moves forward; got ms={ms}")
        self.now += ms
        self._begin_step()
        self._record(ClockAdvances(ms))

    def operator_sets_fast_failure_enable(self, enabled: bool) -> None:
        """updateBrokerConfig brokerFastFailureEnable; the next run reads it."""
        if self.fast_failure_enable == enabled:
            raise StepRefused(f"brokerFastFailureEnable is already {enabled}")
        self.fast_failure_enable = enabled
        self._begin_step()
        self._record(OperatorSetsFastFailureEnable(enabled))

    def operator_sets_queue_wait(self, queue: ExecutorName, wait_ms: int) -> None:
        """updateBrokerConfig waitTimeMillsIn<queue>Queue; the next scan of that queue reads it."""
        if not any(q is queue for q, _ in self.queue_waits):
            raise StepRefused(f"the {queue.value} queue is not cleaned by fast failure here")
        if self.wait_for(queue) == wait_ms:
            raise StepRefused(f"the {queue.value} queue's wait is already {wait_ms} ms")
        self.queue_waits = tuple((q, wait_ms if q is queue else w) for q, w in self.queue_waits)
        self._begin_step()
        self._record(OperatorSetsQueueWait(queue, wait_ms))

    def internal_task_submitted(self, executor: ExecutorName) -> None:
        """Broker code submits a plain FutureTask to an executor whose threads all exist."""
        pool = self._executor(executor)
        if self.should_start_worker(pool):
            raise StepRefused(
                f"executor {executor.value} has started {len(pool.workers)} of {pool.core_pool_size} threads: "
                "the task would run on a new thread, which the spec does not model"
            )
        if not self.queue_has_room(pool):
            raise StepRefused(f"executor {executor.value}'s queue is full: submit would throw RejectedExecutionException")
        pool.queue.append(InternalTask(self.next_foreign_id))
        self.next_foreign_id += 1
        self._begin_step()
        self._record(InternalTaskSubmitted(executor))

    def ha_service_acquires_put_lock(self) -> None:
        """CommitLog.appendData takes the put lock and never stamps beginTimeInLock (corner 5)."""
        if not self.put_message_lock.try_lock(HA_SERVICE):
            raise StepRefused(f"the put lock is held by {self.put_message_lock.holder}")
        self._begin_step()
        self._record(HaServiceAcquiresPutLock())

    def ha_service_releases_put_lock(self) -> None:
        """appendData's finally: unlock."""
        if self.put_message_lock.holder != HA_SERVICE:
            raise StepRefused(f"the HA service does not hold the put lock (holder: {self.put_message_lock.holder})")
        self.put_message_lock.unlock(HA_SERVICE)
        self._begin_step()
        self._record(HaServiceReleasesPutLock())

    def worker_throws_inside_lock(self, executor: ExecutorName, worker: int) -> None:
        """Fault: an exception escapes the put's critical section of this worker."""
        thread = self._started_worker(executor, worker)
        if not thread.in_put_lock:
            raise StepRefused(f"worker {executor.value}[{worker}] is not inside the put lock")
        self._begin_step()
        action = self._worker_bodies[(executor, worker)].throw(InjectedFault(f"{executor.value}[{worker}]"))
        assert action is not None, "a worker that caught an exception answers it in the same step"
        self._record(action)

    def rate_limit_handler_fails_open(self, io_thread: int) -> None:
        """Fault: the limiter's own executor rejects the task; the request passes on unlimited."""
        io = self._io_thread(io_thread)
        if io.command is None or io.passed_limiter or not self.rate_limit_applies(io.command):
            raise StepRefused(f"IO thread {io_thread} has no request waiting at the rate-limit handler")
        io.limiter_pool_rejects = True
        self.step_io_thread(io_thread)

    def _io_thread(self, index: int) -> IoThreadContext:
        if not 0 <= index < len(self.io_threads):
            raise StepRefused(f"there are {len(self.io_threads)} IO threads, not an IO thread {index}")
        return self.io_threads[index]

    def _executor(self, name: ExecutorName) -> FixedThreadPoolExecutor:
        try:
            return self.executors[name]
        except KeyError:
            raise StepRefused(f"this configuration has no {name.value} executor") from None

    def _started_worker(self, executor: ExecutorName, worker: int) -> WorkerThread:
        pool = self._executor(executor)
        if not 0 <= worker < len(pool.workers):
            raise StepRefused(f"executor {executor.value} has started {len(pool.workers)} threads, not a worker {worker}")
        return pool.workers[worker]

    # ================================================================ responses

    def oneway_answer_written(self, writer: Writer, kind: ResponseKind) -> bool:
        """Whether a response reaches a oneway client.

        The dispatcher wrote NOT_SUPPORTED and [REJECTREQUEST] unconditionally in 4.0.0–5.0.0 and
        drops them in writeResponse from 5.1.0; [OVERLOAD] is guarded by ``!isOnewayRPC()`` in every
        version; the processor's callback never answers oneway; ``channel.writeAndFlush`` (fast
        failure's returnResponse, the rate-limit handler) always writes.
        Source: NettyRemotingAbstract.processRequestCommand, RequestTask.returnResponse (1.1, corner 8).
        """
        match writer:
            case Writer.DISPATCH:
                return kind is not ResponseKind.OVERLOAD and self.profile.dispatch_answers_oneway
            case Writer.CALLBACK:
                return False
            case Writer.DIRECT:
                return True

    def write_response(self, writer: Writer, command: RemotingCommand, response: state.Response | None) -> None:
        """Write ``response`` to the request's channel, or finish the request silently."""
        if response is None or (command.oneway and not self.oneway_answer_written(writer, response.kind)):
            self._finished_silently.append(command.opaque)
        else:
            self._responses.append(response)

    @property
    def responses(self) -> list[state.Response]:
        """Every response written, in order."""
        return list(self._responses)

    # ================================================================ remoting threads

    def _netty_handler_thread(self, io: IoThreadContext) -> ThreadBody:
        """A Netty event-loop thread: the rate-limit handler (if on), then processRequestCommand."""
        while True:
            command = io.command
            if command is None:
                yield None
            elif not io.passed_limiter and self.rate_limit_applies(command):
                yield self._rate_limit_handler(io, command)
            else:
                yield from self._process_request_command(io, command)

    def rate_limit_applies(self, command: RemotingCommand) -> bool:
        """RateLimitHandler limits send-type requests with a topic (source 004; getResource is not shown
        there, so the send header's topic, the %RETRY% topic for a send-back, is the resource)."""
        return self.config.rate_limit.enabled and command.code in PUT_CODES and command.topic != ""

    def create_rate_limiter(self, permits_per_second: float) -> TokenBucketRateLimiter:
        """``new TokenBucketRateLimiter(qps)``; its stopwatch starts now."""
        return TokenBucketRateLimiter(permits_per_second, self.now, self.config.rate_limit.circuit_breaker_open_micros)

    def _rate_limit_handler(self, io: IoThreadContext, command: RemotingCommand) -> Action:
        """Source 004 RateLimitHandler.channelRead0: acquire from the topic's bucket or answer [RateLimit]."""
        if io.limiter_pool_rejects:
            # The rejection policy runs the task on the caller; channelRead0 sees !inEventLoop() and
            # fires the request on without touching a bucket (004 section 四.3).
            io.limiter_pool_rejects = False
            io.passed_limiter = True
            return RateLimitHandlerFailsOpen(io.index)
        limiter = self.rate_limiter_map.get(command.topic)
        if limiter is None:  # computeIfAbsent: the creating request's code fixes the rate
            limit = self.config.rate_limit
            qps = limit.send_msg_back_qps if command.code is RequestCode.CONSUMER_SEND_MSG_BACK else limit.default_qps
            limiter = self.create_rate_limiter(qps)
            self.rate_limiter_map[command.topic] = limiter
        if limiter.acquire(self.now):
            io.passed_limiter = True
            return RateLimitHandlerAdmits(io.index)
        remark = rate_limit_remark(command.topic, limiter.last_need_wait_micros)
        self.write_response(
            Writer.DIRECT, command, state.Response(command.opaque, ResponseCode.SYSTEM_BUSY, remark, ResponseKind.RATE_LIMIT)
        )
        io.finish()
        return RateLimitHandlerThrottles(io.index)

    def find_processor(self, code: RequestCode) -> tuple[Processor, ExecutorName] | None:
        """``processorTable.get(code)``, else ``defaultRequestProcessorPair``."""
        return self.processor_table.get(code, self.default_processor)

    def reject_request(self, processor: Processor) -> bool:
        """``processor.rejectRequest()``: SendMessageProcessor refuses while busy or pool-deficient.

        Source: B/processor/SendMessageProcessor.rejectRequest (semantics.md 2.1).
        """
        return processor.writes_commit_log and (self.is_os_page_cache_busy() or self.is_transient_store_pool_deficient())

    def reject_request_remark(self) -> str:
        """The [REJECTREQUEST] remark (the rust port writes ``[REJECT REQUEST]``, semantics.md 8.2)."""
        return REJECT_REQUEST_REMARK

    def _process_request_command(self, io: IoThreadContext, command: RemotingCommand) -> ThreadBody:
        """NettyRemotingAbstract.processRequestCommand: lookup → NOT_SUPPORTED → rejectRequest →
        new RequestTask → submit → [OVERLOAD] (corner 7). Creating and submitting are two steps."""
        found = self.find_processor(command.code)
        if found is None:
            response = state.Response(
                command.opaque,
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                not_supported_remark(command.code),
                ResponseKind.NOT_SUPPORTED,
            )
            self.write_response(Writer.DISPATCH, command, response)
            io.finish()
            yield DispatchAnswersNotSupported(io.index)
            return
        processor, executor = found
        if self.reject_request(processor):
            response = state.Response(
                command.opaque, ResponseCode.SYSTEM_BUSY, self.reject_request_remark(), ResponseKind.REJECT_REQUEST
            )
            self.write_response(Writer.DISPATCH, command, response)
            io.finish()
            yield DispatchRejectsRequest(io.index)
            return
        task = RequestTask(command, create_timestamp=self.now)
        io.task = task
        yield DispatchCreatesTask(io.index)
        io.finish()
        yield self._submit(io.index, self.executors[executor], task)

    def should_start_worker(self, executor: FixedThreadPoolExecutor) -> bool:
        """ThreadPoolExecutor.execute's first branch: ``workerCountOf(c) < corePoolSize``."""
        return len(executor.workers) < executor.core_pool_size

    def queue_has_room(self, executor: FixedThreadPoolExecutor) -> bool:
        """``LinkedBlockingQueue.offer`` succeeds: ``count < capacity``."""
        return executor.capacity is None or len(executor.queue) < executor.capacity

    def _submit(self, io_index: int, executor: FixedThreadPoolExecutor, task: RequestTask) -> Action:
        """``executor.submit(task)``: a new core thread runs it, else the queue takes it, else AbortPolicy
        throws and the dispatcher answers [OVERLOAD] (never to a oneway request). Core = max, so no
        non-core thread can be added (corner 9)."""
        future = FutureTaskExt(task)
        if self.should_start_worker(executor):
            self._add_worker(executor, future)
            return DispatchStartsWorker(io_index)
        if self.queue_has_room(executor):
            executor.queue.append(future)
            return DispatchQueuesTask(io_index)
        command = task.command
        response = state.Response(command.opaque, ResponseCode.SYSTEM_BUSY, OVERLOAD_REMARK, ResponseKind.OVERLOAD)
        self.write_response(Writer.DISPATCH, command, response)
        return DispatchRejectsOverload(io_index)

    # ================================================================ executor workers

    def _add_worker(self, executor: FixedThreadPoolExecutor, first_task: FutureTaskExt) -> None:
        """``addWorker(firstTask, true)``: the new thread starts with the task in hand."""
        worker = WorkerThread(executor.name, len(executor.workers))
        worker.task = first_task.runnable
        executor.workers.append(worker)
        self._worker_bodies[(executor.name, worker.index)] = self._run_worker(executor, worker)

    def _run_worker(self, executor: FixedThreadPoolExecutor, worker: WorkerThread) -> ThreadBody:
        """ThreadPoolExecutor.runWorker: run the task in hand, then ``getTask()`` (``take()``) forever."""
        while True:
            task = worker.task
            if task is None:
                yield None if not executor.queue else self._get_task(executor, worker)
                continue
            try:
                yield from self._run_request(executor, worker, task)
            except InjectedFault:
                # processRequestCommand's run closure: catch (Throwable e) → SYSTEM_ERROR with
                # exceptionSimpleDesc(e), written by the callback (so not for oneway).
                command = task.command
                worker.finish()
                response = state.Response(command.opaque, ResponseCode.SYSTEM_ERROR, None, ResponseKind.EXCEPTION)
                self.write_response(Writer.CALLBACK, command, response)
                yield WorkerThrowsInsideLock(executor.name, worker.index)

    def task_should_run(self, task: RequestTask) -> bool:
        """``RequestTask.run``: ``if (!stopRun) runnable.run()`` (corner 26)."""
        return not task.stop_run

    def _get_task(self, executor: FixedThreadPoolExecutor, worker: WorkerThread) -> Action:
        """``queue.take()`` and the start of ``FutureTaskExt.run``: a cancelled RequestTask does nothing."""
        item = executor.queue.popleft()
        task = cast_runnable(item)
        if task is None:
            assert isinstance(item, InternalTask)
            item.run()
            return WorkerRunsForeignTask(executor.name, worker.index)
        if not self.task_should_run(task):
            return WorkerDiscardsCancelledTask(executor.name, worker.index)
        worker.task = task
        return WorkerTakesTask(executor.name, worker.index)

    def _finish_on_worker(self, worker: WorkerThread, command: RemotingCommand, response: state.Response | None) -> None:
        worker.finish()
        self.write_response(Writer.CALLBACK, command, response)

    def process_request(self, processor: Processor, command: RemotingCommand) -> state.Response | None:
        """A processor that does not write the commit log answers SUCCESS; AdminBrokerProcessor's
        ``default:`` branch answers an unknown code with REQUEST_CODE_NOT_SUPPORTED from 4.9.1 and
        returns null (nothing is written) before (B/processor/AdminBrokerProcessor.java)."""
        if processor.knows(command.code):
            return state.Response(command.opaque, ResponseCode.SUCCESS, None, ResponseKind.SUCCESS)
        if self.profile.admin_answers_unknown_code:
            return state.Response(
                command.opaque,
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                not_supported_remark(command.code),
                ResponseKind.NOT_SUPPORTED,
            )
        return None

    def page_cache_busy_answer(self, code: RequestCode) -> tuple[ResponseCode, str]:
        """OS_PAGE(_)CACHE_BUSY → [PC_SYNCHRONIZED] with the profile's code; a send-back answers
        SYSTEM_ERROR with the status name (SendMessageProcessor.handlePutMessageResult, 2.6)."""
        if code is RequestCode.CONSUMER_SEND_MSG_BACK:
            return ResponseCode.SYSTEM_ERROR, self.profile.page_cache_busy_status
        return self.profile.pc_synchronized_code, PC_SYNCHRONIZED_REMARK

    def _run_request(self, executor: FixedThreadPoolExecutor, worker: WorkerThread, task: RequestTask) -> ThreadBody:
        """The processor's body for one RequestTask, through the put path for a send."""
        command = task.command
        found = self.find_processor(command.code)
        assert found is not None, "only a routed request becomes a RequestTask"
        processor, _ = found
        self._started.append(command.opaque)
        if not processor.writes_commit_log:
            self._finish_on_worker(worker, command, self.process_request(processor, command))
            yield WorkerProcessesRequest(executor.name, worker.index)
            return
        # DefaultMessageStore.asyncPutMessage's pre-check (HookUtils.checkBeforePutMessage in 5.x).
        if self.is_os_page_cache_busy():
            code, remark = self.page_cache_busy_answer(command.code)
            response = state.Response(command.opaque, code, remark, ResponseKind.PC_SYNCHRONIZED)
            self._finish_on_worker(worker, command, response)
            yield WorkerFindsPageCacheBusy(executor.name, worker.index)
            return
        worker.passed_put_check = True
        yield WorkerPassesPutCheck(executor.name, worker.index)
        yield from self._commit_log_put(executor, worker)
        response = state.Response(command.opaque, ResponseCode.SUCCESS, None, ResponseKind.SUCCESS)
        self._finish_on_worker(worker, command, response)
        yield WorkerAppendsAndUnlocks(executor.name, worker.index)

    # ================================================================ the commit log

    def is_os_page_cache_busy(self) -> bool:
        """DefaultMessageStore.isOSPageCacheBusy: ``diff < 10000000 && diff > osPageCacheBusyTimeOutMills``.

        With epoch clocks ``beginTimeInLock == 0`` makes the diff huge; on this small clock the idle
        value has to be said explicitly (corner 2). Source: S/DefaultMessageStore.java (2.2).
        """
        begin = self.begin_time_in_lock
        if begin == 0:
            return False
        diff = self.now - begin
        return diff < BUSY_UPPER_BOUND_MS and diff > self.config.os_page_cache_busy_timeout_ms

    def reset_begin_time_on_exception(self) -> bool:
        """Whether CommitLog's ``finally`` resets beginTimeInLock (4.9.3–4.9.8 only, fix c6aeb782e5)."""
        return self.profile.begin_time_reset_in_finally

    def _commit_log_put(self, executor: FixedThreadPoolExecutor, worker: WorkerThread) -> ThreadBody:
        """CommitLog.asyncPutMessage's critical section: lock, stamp, get a file, append, reset, unlock.

        Source: S/CommitLog.java (semantics.md 2.3): the reset at the normal end is inside the try;
        ``finally`` only unlocks, except in 4.9.3–4.9.8 where it also resets.
        """
        while not self.put_message_lock.try_lock(worker.holder):
            yield None  # spinning or parked: invisible to isOSPageCacheBusy (corner 3)
        try:
            self.begin_time_in_lock = self.now
            worker.in_put_lock = True
            yield WorkerAcquiresPutLock(executor.name, worker.index)
            last = self.mapped_file_queue.get_last_mapped_file()
            if last is None or last.is_full(self.config.mapped_file_size):
                self.create_mapped_file()
                yield WorkerCreatesMappedFile(executor.name, worker.index)
            current = self.mapped_file_queue.get_last_mapped_file()
            assert current is not None
            current.append_message()
            self.begin_time_in_lock = 0
        finally:
            worker.in_put_lock = False
            if self.reset_begin_time_on_exception():
                self.begin_time_in_lock = 0
            self.put_message_lock.unlock(worker.holder)

    def create_mapped_file(self) -> None:
        """``getLastMappedFile(0)`` → AllocateMappedFileService.mmapOperation → ``MappedFile.init(..., pool)``,
        which borrows a buffer when the pool is enabled (null when none is left: writes go to the mmap).

        A file without a buffer has nothing for the commit service (and is full: a new file is only
        created when the last one is), so it leaves the queue here. Source: semantics.md 3.4.
        """
        queue = self.mapped_file_queue
        index = queue.next_file_index()
        buffer = self.borrow_buffer() if self.config.pool_enabled else None
        for finished in [f for f in queue.mapped_files if f.write_buffer is None]:
            queue.delete(finished)
        queue.mapped_files.append(MappedFile(index, buffer))

    # ================================================================ TransientStorePool and commit

    def borrow_buffer(self) -> int | None:
        """TransientStorePool.borrowBuffer: ``pollFirst`` (null, never blocking, when empty)."""
        available = self.transient_store_pool.available_buffers
        return available.popleft() if available else None

    def return_buffer(self, buffer: int) -> None:
        """TransientStorePool.returnBuffer: ``offerFirst``, so reuse is LIFO (corner 32)."""
        self.transient_store_pool.available_buffers.appendleft(buffer)

    def remain_transient_store_buffer_numbs(self) -> int:
        """The available count, or Integer.MAX_VALUE when the pool is not in use (2.7)."""
        if not self.config.pool_enabled:
            return INTEGER_MAX_VALUE
        return self.transient_store_pool.available_buffer_nums()

    def is_transient_store_pool_deficient(self) -> bool:
        """``remainTransientStoreBufferNumbs() == 0`` (every version)."""
        return self.remain_transient_store_buffer_numbs() == 0

    def file_to_commit(self) -> MappedFile | None:
        """MappedFileQueue.commit commits the one file holding ``committedWhere``: the oldest file
        with uncommitted bytes in a write buffer (files without one never advance committedPosition)."""
        for f in self.mapped_file_queue.mapped_files:
            if f.write_buffer is not None and f.committed_position < f.wrote_position:
                return f
        return None

    def buffer_due_back(self, file: MappedFile) -> bool:
        """MappedFile.commit's only return path: ``committedPosition == fileSize`` (corner 33)."""
        return file.committed_position == self.config.mapped_file_size

    def _commit_real_time_service(self) -> ThreadBody:
        """CommitRealTimeService.run: commit, and when that filled the file, return its buffer.

        The cadence and commitCommitLogLeastPages are left out: it commits whenever there is
        something to commit. The copy and the return are two steps (in Java, one commit() call).
        """
        while True:
            file = self.file_to_commit()
            if file is None:
                yield None
                continue
            file.commit0()
            yield CommitServiceCommits()
            if self.buffer_due_back(file):
                buffer = file.write_buffer
                assert buffer is not None
                self.return_buffer(buffer)
                file.write_buffer = None
                if file is not self.mapped_file_queue.get_last_mapped_file():
                    self.mapped_file_queue.delete(file)
                yield CommitServiceReturnsBuffer()

    # ================================================================ BrokerFastFailure

    def next_fast_failure_run(self, scheduled: int) -> int:
        """scheduleAtFixedRate: the next run is one period after this run's slot (not its end)."""
        return scheduled + self.config.fast_failure_period_ms

    def fast_failure_switch_on(self) -> bool:
        """``if (brokerConfig.isBrokerFastFailureEnable())`` from 4.2.0; 4.0.0–4.1.0 have no switch."""
        return self.fast_failure_enable or not self.profile.fast_failure_switch

    def phase_one_takes(self, head: QueueItem) -> bool:
        """Phase 1 polls whatever is at the head: there is no age threshold (corner 13)."""
        return True

    def fast_failure_now(self, run_started_at: int) -> int:
        """The clock phase 2 compares a head against: Java re-reads currentTimeMillis for every head
        (corner 25), so the run's start time is not used (the rust port uses it, semantics.md 8.1)."""
        return self.now

    def is_expired(self, task: RequestTask, now: int, max_wait_ms: int) -> bool:
        """``behind >= maxWait`` with ``behind = now - createTimestamp``: non-strict (corner 20)."""
        return now - task.create_timestamp >= max_wait_ms

    def find_expired(self, queue: deque[QueueItem], max_wait_ms: int, now: int) -> QueueItem | None:
        """cleanExpiredRequestInQueue's ``peek``: the head if it is a live, expired RequestTask.

        An empty queue, a head castRunnable cannot unwrap, a stopRun head, or a young head ends the
        scan of this queue (corners 21, 22). Source: B/latency/BrokerFastFailure.java (4.3).
        """
        if not queue:
            return None
        head = queue[0]
        task = cast_runnable(head)
        if task is None or task.stop_run:
            return None
        return head if self.is_expired(task, now, max_wait_ms) else None

    def remove_expired(self, queue: deque[QueueItem], head: QueueItem) -> None:
        """``blockingQueue.remove(runnable)`` before ``setStopRun(true)``: the task leaves the queue.

        Java answers only if the removal succeeded; here no other thread runs within the step, so it
        always does (corner 23). The rust port instead leaves cancelled entries queued (semantics.md 8.1).
        """
        queue.remove(head)

    def fast_failure_scan_limit(self) -> int | None:
        """How many heads one run may clean from one queue: no limit in Java."""
        return None

    def reported_queue_size(self, queue: deque[QueueItem]) -> int:
        """``size of queue`` in the remarks: measured right after the removal (corners 18, 24)."""
        return len(queue)

    def wait_for(self, queue: ExecutorName) -> int:
        """The current ``waitTimeMillsIn<queue>Queue``."""
        for name, wait in self.queue_waits:
            if name is queue:
                return wait
        raise KeyError(f"the {queue.value} queue is not cleaned")

    def _fast_failure_scheduled_thread(self) -> ThreadBody:
        """BrokerFastFailureScheduledThread: runs never overlap; a late run is followed at once by the
        next due one (corner 27). Source: BrokerFastFailure.start (4.1)."""
        while True:
            if self.now < self.fast_failure_next_run:
                yield None
                continue
            self.fast_failure_next_run = self.next_fast_failure_run(self.fast_failure_next_run)
            if not self.fast_failure_switch_on():
                yield FastFailureSkipsRun()
                continue
            self.fast_failure_stage = FastFailureStage.PCBUSY_DRAIN
            yield FastFailureStartsRun()
            yield from self._clean_expired_request(run_started_at=self.now)

    def _clean_expired_request(self, run_started_at: int) -> ThreadBody:
        """BrokerFastFailure.cleanExpiredRequest: the PCBUSY drain of the send queue, then each queue's timeouts."""
        send_queue = self.executors[ExecutorName.SEND].queue
        while self.is_os_page_cache_busy() and send_queue and self.phase_one_takes(send_queue[0]):
            item = send_queue.popleft()
            task = cast_runnable(item)
            if task is None:  # 4.x: rt.returnResponse throws NPE, swallowed; 5.x skips null (corner 17)
                yield FastFailureDropsForeignElement()
                continue
            remark = pcbusy_remark(self.now - task.create_timestamp, self.reported_queue_size(send_queue))
            self._return_response(task, remark, ResponseKind.PCBUSY_CLEAN_QUEUE)
            yield FastFailureDrainsBusySendQueue()
        self._start_scan(0)
        yield FastFailureEndsBusyDrain()
        while self.fast_failure_stage is FastFailureStage.TIMEOUT_CLEAN:
            name, _ = self.queue_waits[self.fast_failure_queue_index]
            yield from self._clean_expired_request_in_queue(name, self.fast_failure_scan_wait, run_started_at)

    def _start_scan(self, index: int) -> None:
        """Call cleanExpiredRequestInQueue on the ``index``-th cleaned queue with its maxWait, read now
        (4.2.0–5.2.0 a getter, 5.3.0+ a Supplier: a change applies from the next scan, corner 27);
        past the last queue the run ends."""
        if index >= len(self.queue_waits):
            self.fast_failure_stage = FastFailureStage.BETWEEN_RUNS
            self.fast_failure_queue_index = 0
            self.fast_failure_scan_wait = 0
        else:
            self.fast_failure_stage = FastFailureStage.TIMEOUT_CLEAN
            self.fast_failure_queue_index = index
            self.fast_failure_scan_wait = self.queue_waits[index][1]

    def _clean_expired_request_in_queue(self, name: ExecutorName, max_wait_ms: int, run_started_at: int) -> ThreadBody:
        """cleanExpiredRequestInQueue(queue, maxWait): remove expired heads until one is not."""
        queue = self.executors[name].queue
        limit = self.fast_failure_scan_limit()
        cleaned = 0
        while True:
            now = self.fast_failure_now(run_started_at)
            head = None if limit is not None and cleaned >= limit else self.find_expired(queue, max_wait_ms, now)
            if head is None:
                self._start_scan(self.fast_failure_queue_index + 1)
                yield FastFailureStopsAtHead(name)
                return
            task = cast_runnable(head)
            assert task is not None
            self.remove_expired(queue, head)
            task.stop_run = True
            remark = timeout_remark(now - task.create_timestamp, self.reported_queue_size(queue))
            self._return_response(task, remark, ResponseKind.TIMEOUT_CLEAN_QUEUE)
            cleaned += 1
            yield FastFailureCleansExpiredHead(name)

    def _return_response(self, task: RequestTask, remark: str, kind: ResponseKind) -> None:
        """RequestTask.returnResponse(SYSTEM_BUSY, remark): ``channel.writeAndFlush``, oneway or not."""
        command = task.command
        self.write_response(Writer.DIRECT, command, state.Response(command.opaque, ResponseCode.SYSTEM_BUSY, remark, kind))

    # ================================================================ observation

    def observe(self) -> state.BrokerState:
        """The refinement mapping: this broker as a spec state."""
        return state.BrokerState(
            now=self.now,
            next_request_id=self.next_request_id,
            next_foreign_id=self.next_foreign_id,
            io_threads=tuple(_observe_io_thread(io) for io in self.io_threads),
            executors=tuple(
                state.Executor(
                    name=pool.name,
                    queue=tuple(_observe_item(item) for item in pool.queue),
                    workers=tuple(_observe_worker(w) for w in pool.workers),
                )
                for pool in self.executors.values()
            ),
            lock=PutLock(holder=self.put_message_lock.holder, begin_time_in_lock=self.begin_time_in_lock),
            files=tuple(
                state.MappedFile(f.index, f.wrote_position, f.committed_position, f.write_buffer)
                for f in self.mapped_file_queue.mapped_files
            ),
            available_buffers=tuple(self.transient_store_pool.available_buffers),
            fast_failure_phase=_OBSERVED_PHASE[self.fast_failure_stage],
            fast_failure_queue=self.fast_failure_queue_index,
            fast_failure_scan_wait=self.fast_failure_scan_wait,
            fast_failure_next_run=self.fast_failure_next_run,
            fast_failure_enable=self.fast_failure_enable,
            queue_waits=self.queue_waits,
            buckets=tuple(
                _observe_bucket(resource, limiter) for resource, limiter in sorted(self.rate_limiter_map.items())
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
