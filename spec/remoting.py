"""Remoting (IO) threads: arrival, the optional rate-limit handler, and processRequestCommand.

``processRequestCommand`` runs on the Netty handler thread in this order (corner 7): processor
lookup → REQUEST_CODE_NOT_SUPPORTED → (GO_AWAY, 5.2.0+, not modelled) → ``rejectRequest()`` →
``new RequestTask`` (createTimestamp) → ``executor.submit`` → ``[OVERLOAD]``. A request refused
before the RequestTask exists never gets a timestamp and never enters a queue.

The spec splits the method in two atomic steps, creating the task and submitting it, because the
clock may move between them on one thread while another thread dispatches: queue order then need
not follow createTimestamp, which is why phase 2 of fast failure only looks at the head (corner 21).

Source: R/netty/NettyRemotingAbstract.java processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317), 4.0.0–HEAD.
"""

from __future__ import annotations

from typing import Final

from spec.codes import (
    OVERLOAD_REMARK,
    PUT_CODES,
    REJECT_REQUEST_REMARK,
    not_supported_remark,
    rate_limit_remark,
    RequestCode,
    ResponseCode,
    ResponseKind,
)
from spec.config import BrokerConfig
from spec.frozen import record, replace
from spec.limiter import circuit_breaker_acquire, create_bucket
from spec.profiles import ExecutorName
from spec.putlock import is_os_page_cache_busy
from spec.state import (
    NO_OUTPUTS,
    BrokerState,
    Bucket,
    IoStage,
    IoThread,
    Next,
    Request,
    RequestTask,
    Response,
    settle,
    with_executor,
    with_io_thread,
    Worker,
    WorkerStage,
)
from spec.storepool import is_transient_store_pool_deficient
from spec.actors import EnvironmentInput, Fault, IoThreadStep

IDLE_IO = IoThread(IoStage.IDLE)


# -- Shared definitions ----------------------------------------------------------------------------


def route(config: BrokerConfig, code: int) -> ExecutorName | None:
    """The executor a request goes to: its processor's, else the default processor's; None if neither.

    Source: ``processorTable.get(code)``, falling back to ``defaultRequestProcessor(Pair)``, in
    NettyRemotingAbstract.processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317); the table
    is BrokerController.registerProcessor (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java#L1077-L1204), per release in :mod:`spec.releases`.
    """
    if config.profile.has_processor_for(code):
        return config.profile.executor_for(code)
    return ExecutorName.ADMIN if config.default_processor_registered else None


def reject_request(config: BrokerConfig, s: BrokerState, code: int) -> bool:
    """``processor.rejectRequest()``: only SendMessageProcessor refuses, while busy or pool-deficient.

    Source: B/processor/SendMessageProcessor.java rejectRequest (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java#L129-L139): ``isOSPageCacheBusy() ||
    isTransientStorePoolDeficient()`` (4.0.0–HEAD; 5.x adds a slave check, not modelled since the
    spec's broker is a master). Every other processor returns false.
    """
    if not config.profile.writes_commit_log(code):
        return False
    return is_os_page_cache_busy(
        s.lock, s.now, config.os_page_cache_busy_timeout_ms
    ) or is_transient_store_pool_deficient(s.available_buffers, config.pool_enabled)


def limiter_applies(config: BrokerConfig, request: Request) -> bool:
    """Whether the rate-limit handler limits this request: a send-type request with a topic.

    Source: docs/sources.md, source 004 (RateLimitHandler.channelRead0: disabled, non-request, or ``getResource`` null
    pass through). Simplification: the article does not show ``getResource``; the spec takes the
    topic of the send-type codes (the %RETRY% topic for CONSUMER_SEND_MSG_BACK) as the resource.
    """
    return config.rate_limit.enabled and request.code in PUT_CODES and request.topic != ""


def _limit_qps(config: BrokerConfig, request: Request) -> float:
    """RateLimitHandler's rate: sendMsgBackLimitQps for CONSUMER_SEND_MSG_BACK, else defaultLimitQps."""
    if request.code == RequestCode.CONSUMER_SEND_MSG_BACK:
        return config.rate_limit.send_msg_back_qps
    return config.rate_limit.default_qps


def limiter_decision(config: BrokerConfig, s: BrokerState, request: Request) -> tuple[bool, Bucket]:
    """The topic bucket's ``acquire()`` (creating it on first use), and the bucket after.

    ``computeIfAbsent(resource, new TokenBucketRateLimiter(qps))``: the rate is fixed by the
    request that creates the bucket. The stopwatch starts at creation, in microseconds.
    Simplification: the broker clock has millisecond resolution, so the limiter's micros are
    multiples of 1000.
    """
    existing = next((b for b in s.buckets if b.resource == request.topic), None)
    if existing is None:
        existing = Bucket(request.topic, s.now, create_bucket(_limit_qps(config, request)))
    now_micros = (s.now - existing.created_at) * 1000
    admitted, bucket = circuit_breaker_acquire(
        existing.bucket, now_micros, config.rate_limit.circuit_breaker_open_micros
    )
    return admitted, replace(existing, bucket=bucket)


def _with_bucket(s: BrokerState, bucket: Bucket) -> BrokerState:
    others = tuple(b for b in s.buckets if b.resource != bucket.resource)
    return replace(s, buckets=tuple(sorted(others + (bucket,), key=lambda b: b.resource)))


def request_to_dispatch(config: BrokerConfig, io: IoThread) -> Request | None:
    """The request this thread would run processRequestCommand on next, if any."""
    if io.request is None:
        return None
    if io.stage is IoStage.ADMITTED:
        return io.request
    if io.stage is IoStage.RECEIVED and not limiter_applies(config, io.request):
        return io.request
    return None


def _io(s: BrokerState, index: int) -> IoThread | None:
    return s.io_threads[index] if 0 <= index < len(s.io_threads) else None


def _at_limiter(config: BrokerConfig, s: BrokerState, index: int) -> Request | None:
    io = _io(s, index)
    if io is None or io.stage is not IoStage.RECEIVED or io.request is None:
        return None
    return io.request if limiter_applies(config, io.request) else None


def _dispatching(config: BrokerConfig, s: BrokerState, index: int) -> Request | None:
    io = _io(s, index)
    return None if io is None else request_to_dispatch(config, io)


def _submitting(config: BrokerConfig, s: BrokerState, index: int) -> tuple[RequestTask, ExecutorName] | None:
    io = _io(s, index)
    if io is None or io.stage is not IoStage.TASK_CREATED or io.task is None:
        return None
    executor = route(config, io.task.request.code)
    assert executor is not None, "a task is created only for a routed request"
    return io.task, executor


# -- RequestArrives ---------------------------------------------------------------------------------


@record
class RequestArrives(EnvironmentInput):
    """A producer's or consumer's request is decoded on an idle remoting thread.

    Changes: io_threads, next_request_id
    """

    io_thread: int
    code: int
    topic: str
    oneway: bool


def request_arrives_enabled(config: BrokerConfig, s: BrokerState, a: RequestArrives) -> bool:
    """Guard: the remoting thread is idle, and the code's executor (if any) is part of the model.

    Source: NettyRemotingAbstract.processMessageReceived (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L178-L191): a REQUEST_COMMAND on an event-loop thread.
    """
    io = _io(s, a.io_thread)
    if io is None or io.stage is not IoStage.IDLE:
        return False
    executor = route(config, a.code)
    return executor is None or any(e.name is executor for e in config.executors)


def request_arrives(config: BrokerConfig, s: BrokerState, a: RequestArrives) -> Next:
    """Effect: the thread holds the decoded request; it gets the next opaque.

    Source: NettyRemotingAbstract.processMessageReceived (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L178-L191) (REQUEST_COMMAND → processRequestCommand).
    Simplification: any idle remoting thread may take any request (Netty binds a channel to one
    event loop; the spec lets the choice of thread be free, which includes every binding).
    """
    request = Request(s.next_request_id, a.code, a.topic, a.oneway)
    s = replace(s, next_request_id=s.next_request_id + 1)
    return with_io_thread(s, a.io_thread, IoThread(IoStage.RECEIVED, request)), NO_OUTPUTS


# -- The rate-limit handler (source 004) ---------------------------------------------------------


@record
class RateLimitHandlerAdmits(IoThreadStep):
    """Source 004's RateLimitHandler takes a permit from the topic's bucket and passes the request on.

    Changes: io_threads, buckets
    """


def rate_limit_handler_admits_enabled(config: BrokerConfig, s: BrokerState, a: RateLimitHandlerAdmits) -> bool:
    """Guard: the request is at the limiter and the topic's bucket admits it now.

    Source: docs/sources.md, source 004: RateLimitHandler.channelRead0, ``rateLimiter.acquire()`` true (section 四.5).
    """
    request = _at_limiter(config, s, a.io_thread)
    return request is not None and limiter_decision(config, s, request)[0]


def rate_limit_handler_admits(config: BrokerConfig, s: BrokerState, a: RateLimitHandlerAdmits) -> Next:
    """Effect: the bucket records the permit; ``ctx.fireChannelRead(cmd)`` passes the request on.

    Source: docs/sources.md, source 004: RateLimitHandler.channelRead0 and TokenBucketRateLimiter.acquire (section 四.5).
    Simplification: the bucket reads the broker's millisecond clock (:func:`limiter_decision`),
    where Guava's stopwatch counts microseconds: an outside comparison with Guava 31 found about
    0.3% of decisions differ for that reason alone, and none otherwise.
    """
    request = _at_limiter(config, s, a.io_thread)
    assert request is not None
    _, bucket = limiter_decision(config, s, request)
    s = _with_bucket(s, bucket)
    return with_io_thread(s, a.io_thread, IoThread(IoStage.ADMITTED, request)), NO_OUTPUTS


@record
class RateLimitHandlerThrottles(IoThreadStep):
    """The topic's bucket denies the request: SYSTEM_BUSY ``[RateLimit]``, written even for oneway.

    Changes: io_threads, buckets
    """


def rate_limit_handler_throttles_enabled(config: BrokerConfig, s: BrokerState, a: RateLimitHandlerThrottles) -> bool:
    """Guard: the request is at the limiter and the topic's bucket denies it now.

    Source: docs/sources.md, source 004: RateLimitHandler.channelRead0, ``rateLimiter.acquire()`` false (section 四.5).
    """
    request = _at_limiter(config, s, a.io_thread)
    return request is not None and not limiter_decision(config, s, request)[0]


def rate_limit_handler_throttles(config: BrokerConfig, s: BrokerState, a: RateLimitHandlerThrottles) -> Next:
    """Effect: SYSTEM_BUSY ``[RateLimit] for <topic> need wait:<lastNeedWaitMicrosecs>microsecs``.

    ``ctx.writeAndFlush(response)`` has no oneway check, so oneway requests are answered too.
    Source: docs/sources.md, source 004: RateLimitHandler.channelRead0 (section 四.5).
    Simplification: as for :func:`rate_limit_handler_admits`, the millisecond clock (about 0.3% of
    decisions differ from Guava's microsecond stopwatch).
    """
    request = _at_limiter(config, s, a.io_thread)
    assert request is not None
    _, bucket = limiter_decision(config, s, request)
    s = _with_bucket(s, bucket)
    remark = rate_limit_remark(request.topic, bucket.bucket.last_need_wait_micros)
    response = Response(request.id, ResponseCode.SYSTEM_BUSY, remark, ResponseKind.RATE_LIMIT)
    return with_io_thread(s, a.io_thread, IDLE_IO), settle(request, response)


@record
class RateLimitHandlerFailsOpen(Fault):
    """The limiter's own pool rejects the task; its rejection policy passes the request on unlimited.

    Changes: io_threads
    """

    io_thread: int


def rate_limit_handler_fails_open_enabled(config: BrokerConfig, s: BrokerState, a: RateLimitHandlerFailsOpen) -> bool:
    """Guard: the request is at the limiter (whether the limiter's pool is full is the environment's choice).

    Source: docs/sources.md, source 004, section 四.3: the handler's executor rejects, and its policy runs the task on the
    caller.
    """
    return _at_limiter(config, s, a.io_thread) is not None


def rate_limit_handler_fails_open(config: BrokerConfig, s: BrokerState, a: RateLimitHandlerFailsOpen) -> Next:
    """Effect: the request passes on without touching any bucket.

    Source: docs/sources.md, source 004, section 四.3: the rejection policy runs the task on the caller's thread, and
    ``channelRead0`` sees ``!ctx.executor().inEventLoop()`` and fires the next handler at once.
    """
    request = _at_limiter(config, s, a.io_thread)
    assert request is not None
    return with_io_thread(s, a.io_thread, IoThread(IoStage.ADMITTED, request)), NO_OUTPUTS


# -- processRequestCommand --------------------------------------------------------------------------


@record
class DispatchAnswersNotSupported(IoThreadStep):
    """No processor and no default processor: REQUEST_CODE_NOT_SUPPORTED from the IO thread.

    Changes: io_threads
    """


def dispatch_answers_not_supported_enabled(
    config: BrokerConfig, s: BrokerState, a: DispatchAnswersNotSupported
) -> bool:
    """Guard: neither the table nor a default processor has an entry for the code.

    Source: NettyRemotingAbstract.processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317): ``processorTable.get(code)`` and
    ``defaultRequestProcessor`` both null.
    """
    request = _dispatching(config, s, a.io_thread)
    return request is not None and route(config, request.code) is None


def dispatch_answers_not_supported(
    config: BrokerConfig, s: BrokerState, a: DispatchAnswersNotSupported
) -> Next:
    """Effect: REQUEST_CODE_NOT_SUPPORTED, remark ``" request type N not supported"``.

    Written for oneway requests in 4.0.0–5.0.0, dropped by writeResponse from 5.1.0 (corner 8).
    Source: NettyRemotingAbstract.processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317) step 2.
    Unreachable in the broker, which registers AdminBrokerProcessor as the default; reachable
    in a bare remoting server or a proxy.
    """
    request = _dispatching(config, s, a.io_thread)
    assert request is not None
    response = None
    if not request.oneway or config.profile.dispatch_answers_oneway:
        response = Response(
            request.id,
            ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
            not_supported_remark(request.code),
            ResponseKind.NOT_SUPPORTED,
        )
    return with_io_thread(s, a.io_thread, IDLE_IO), settle(request, response)


@record
class DispatchRejectsRequest(IoThreadStep):
    """``processor.rejectRequest()`` is true: SYSTEM_BUSY ``[REJECTREQUEST]``; no task is created.

    Changes: io_threads
    """


def dispatch_rejects_request_enabled(config: BrokerConfig, s: BrokerState, a: DispatchRejectsRequest) -> bool:
    """Guard: a processor exists and its ``rejectRequest()`` is true (store busy or pool deficient).

    Source: NettyRemotingAbstract.processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317): ``pair.getObject1().rejectRequest()``.
    """
    request = _dispatching(config, s, a.io_thread)
    return request is not None and route(config, request.code) is not None and reject_request(config, s, request.code)


def dispatch_rejects_request(config: BrokerConfig, s: BrokerState, a: DispatchRejectsRequest) -> Next:
    """Effect: SYSTEM_BUSY ``[REJECTREQUEST]system busy, start flow control for a while``.

    Runs on the IO thread; no RequestTask, no timestamp, no queue. Written for oneway requests
    in 4.0.0–5.0.0 only (corner 8).
    Source: NettyRemotingAbstract.processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317) step 5.
    """
    request = _dispatching(config, s, a.io_thread)
    assert request is not None
    response = None
    if not request.oneway or config.profile.dispatch_answers_oneway:
        response = Response(
            request.id, ResponseCode.SYSTEM_BUSY, REJECT_REQUEST_REMARK, ResponseKind.REJECT_REQUEST
        )
    return with_io_thread(s, a.io_thread, IDLE_IO), settle(request, response)


@record
class DispatchCreatesTask(IoThreadStep):
    """``new RequestTask(...)``: the request is accepted and stamped with the IO thread's clock.

    Changes: io_threads
    """


def dispatch_creates_task_enabled(config: BrokerConfig, s: BrokerState, a: DispatchCreatesTask) -> bool:
    """Guard: a processor exists and does not reject the request.

    Source: NettyRemotingAbstract.processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317): ``rejectRequest()`` false, then ``new
    RequestTask``.
    """
    request = _dispatching(config, s, a.io_thread)
    return (
        request is not None
        and route(config, request.code) is not None
        and not reject_request(config, s, request.code)
    )


def dispatch_creates_task(config: BrokerConfig, s: BrokerState, a: DispatchCreatesTask) -> Next:
    """Effect: ``new RequestTask(run, channel, cmd)``: createTimestamp = now, stopRun = false.

    Source: R/netty/RequestTask.java constructor (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L23-L88) (4.0.0–HEAD); processRequestCommand step 6.
    """
    request = _dispatching(config, s, a.io_thread)
    assert request is not None
    task = RequestTask(request, create_timestamp=s.now)
    return with_io_thread(s, a.io_thread, IoThread(IoStage.TASK_CREATED, request, task)), NO_OUTPUTS


@record
class DispatchStartsWorker(IoThreadStep):
    """``submit`` while fewer than core threads exist: a new thread runs the task; it skips the queue.

    Changes: io_threads, executors
    """


def dispatch_starts_worker_enabled(config: BrokerConfig, s: BrokerState, a: DispatchStartsWorker) -> bool:
    """Guard: fewer than the executor's core threads exist.

    Source: ThreadPoolExecutor.execute (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/ThreadPoolExecutor.html#execute(java.lang.Runnable)): ``workerCountOf(c) < corePoolSize``
    (corner 9).
    """
    submitting = _submitting(config, s, a.io_thread)
    if submitting is None:
        return False
    _, name = submitting
    return len(s.executor(name).workers) < config.executor(name).threads


def dispatch_starts_worker(config: BrokerConfig, s: BrokerState, a: DispatchStartsWorker) -> Next:
    """Effect: ``addWorker(task, core=true)``: a new thread starts with the task; the queue is skipped.

    Source: ThreadPoolExecutor.execute (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/ThreadPoolExecutor.html#execute(java.lang.Runnable)), first branch (corner 9).
    """
    submitting = _submitting(config, s, a.io_thread)
    assert submitting is not None
    task, name = submitting
    executor = s.executor(name)
    executor = replace(executor, workers=executor.workers + (Worker(WorkerStage.TAKEN, task),))
    return with_io_thread(with_executor(s, executor), a.io_thread, IDLE_IO), NO_OUTPUTS


def queue_full(config: BrokerConfig, s: BrokerState, name: ExecutorName) -> bool:
    """Whether ``name``'s queue is bounded and holds its capacity: ``workQueue.offer`` fails."""
    capacity = config.executor(name).capacity
    return capacity is not None and len(s.executor(name).queue) >= capacity


@record
class DispatchQueuesTask(IoThreadStep):
    """``submit`` with all core threads started: the task is offered to the tail of the queue.

    Changes: io_threads, executors
    """


def dispatch_queues_task_enabled(config: BrokerConfig, s: BrokerState, a: DispatchQueuesTask) -> bool:
    """Guard: all core threads exist and the queue has room.

    Source: ThreadPoolExecutor.execute (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/ThreadPoolExecutor.html#execute(java.lang.Runnable)): ``workQueue.offer(command)`` succeeds.
    """
    submitting = _submitting(config, s, a.io_thread)
    if submitting is None:
        return False
    _, name = submitting
    return len(s.executor(name).workers) >= config.executor(name).threads and not queue_full(config, s, name)


def dispatch_queues_task(config: BrokerConfig, s: BrokerState, a: DispatchQueuesTask) -> Next:
    """Effect: ``workQueue.offer(FutureTaskExt(task))`` appends at the tail.

    Source: ThreadPoolExecutor.execute, second branch; BrokerFixedThreadPoolExecutor.newTaskFor (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFixedThreadPoolExecutor.java#L54-L56)
    (4.x–5.1.3) / FutureTaskExtThreadPoolExecutor (5.1.4+) wrap the task.
    """
    submitting = _submitting(config, s, a.io_thread)
    assert submitting is not None
    task, name = submitting
    executor = s.executor(name)
    s = with_executor(s, replace(executor, queue=executor.queue + (task,)))
    return with_io_thread(s, a.io_thread, IDLE_IO), NO_OUTPUTS


@record
class DispatchRejectsOverload(IoThreadStep):
    """The queue is full: RejectedExecutionException → SYSTEM_BUSY ``[OVERLOAD]`` (not for oneway).

    Changes: io_threads
    """


def dispatch_rejects_overload_enabled(config: BrokerConfig, s: BrokerState, a: DispatchRejectsOverload) -> bool:
    """Guard: all core threads exist and the bounded queue is full (core = max, so no thread can be added).

    Source: ThreadPoolExecutor.execute (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/ThreadPoolExecutor.html#execute(java.lang.Runnable)): offer fails and ``addWorker(command, false)`` fails (core =
    max), so AbortPolicy throws.
    """
    submitting = _submitting(config, s, a.io_thread)
    if submitting is None:
        return False
    _, name = submitting
    return len(s.executor(name).workers) >= config.executor(name).threads and queue_full(config, s, name)


def dispatch_rejects_overload(config: BrokerConfig, s: BrokerState, a: DispatchRejectsOverload) -> Next:
    """Effect: AbortPolicy throws RejectedExecutionException → SYSTEM_BUSY ``[OVERLOAD]``, never for oneway.

    The warning log (only when ``currentTimeMillis() % 10000 == 0``, corner 10) is not an output.
    Source: NettyRemotingAbstract.processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317) step 7, guarded by ``!cmd.isOnewayRPC()``
    in 4.0.0–5.0.0 and by writeResponse from 5.1.0.
    """
    submitting = _submitting(config, s, a.io_thread)
    assert submitting is not None
    task, _ = submitting
    request = task.request
    response = None
    if not request.oneway:
        response = Response(request.id, ResponseCode.SYSTEM_BUSY, OVERLOAD_REMARK, ResponseKind.OVERLOAD)
    return with_io_thread(s, a.io_thread, IDLE_IO), settle(request, response)


# -- The steps a remoting thread's stage offers ------------------------------------------------------

#: The stages a remoting thread may be in when it takes each of its steps: each guard above is
#: false for a thread in any other stage (its first test is ``_at_limiter``, ``_dispatching`` or
#: ``_submitting``). So a search over runs of the spec need try only the steps of each thread's own
#: stage (traces/checking/partial.py); tests/test_spec_actions.py holds the table to the guards.
STEP_STAGES: Final[dict[type[IoThreadStep], tuple[IoStage, ...]]] = {
    RateLimitHandlerAdmits: (IoStage.RECEIVED,),
    RateLimitHandlerThrottles: (IoStage.RECEIVED,),
    DispatchAnswersNotSupported: (IoStage.RECEIVED, IoStage.ADMITTED),
    DispatchRejectsRequest: (IoStage.RECEIVED, IoStage.ADMITTED),
    DispatchCreatesTask: (IoStage.RECEIVED, IoStage.ADMITTED),
    DispatchStartsWorker: (IoStage.TASK_CREATED,),
    DispatchQueuesTask: (IoStage.TASK_CREATED,),
    DispatchRejectsOverload: (IoStage.TASK_CREATED,),
}
