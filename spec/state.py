"""The state of one broker, as frozen data, and what one step outputs.

Every field of :class:`BrokerState` is something the broker holds; nothing in it is history kept
for checking. What a step does beyond changing the state (the responses it writes, the requests
it finishes without a response, the processors it starts) is its :class:`Outputs`, which the
claims' monitors observe (:mod:`spec.invariants`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from spec.codes import RequestCode, ResponseCode, ResponseKind, is_flow_control_remark
from spec.config import BrokerConfig
from spec.frozen import record, replace
from spec.limiter import TokenBucket
from spec.putlock import FREE_LOCK, PutLock
from spec.profiles import ExecutorName


@record
class Request:
    """A remoting request command as the broker decoded it."""

    id: int  # RemotingCommand.opaque: the id the response echoes
    code: int  # RemotingCommand.code: any int (the spec names some as RequestCode)
    topic: str  # the send header's topic ("%RETRY%group" for CONSUMER_SEND_MSG_BACK); "" if none
    oneway: bool  # RemotingCommand.isOnewayRPC()


@record
class RequestTask:
    """R/netty/RequestTask.java, as wrapped in a FutureTaskExt in an executor queue."""

    request: Request
    create_timestamp: int  # RequestTask.createTimestamp, taken on the IO thread before submit
    stop_run: bool = False  # RequestTask.stopRun: set by fast failure after removing the task


@record
class ForeignTask:
    """A queue element that is not a RequestTask (a plain FutureTask, or a Callable's FutureTaskExt).

    BrokerFastFailure cannot unwrap it: phase 1 drops it, phase 2 stops at it.
    """

    id: int  # identity only


QueueElement = RequestTask | ForeignTask


class IoStage(enum.Enum):
    """Where a remoting (IO) thread is with its current request."""

    IDLE = "IDLE"  # waiting for the next request
    RECEIVED = "RECEIVED"  # decoded; the rate-limit handler (if any) has not decided yet
    ADMITTED = "ADMITTED"  # passed the rate-limit handler; processRequestCommand not yet run
    TASK_CREATED = "TASK_CREATED"  # RequestTask built (timestamp taken); executor.submit not yet run


@record
class IoThread:
    """One Netty handler thread running processRequestCommand for one request at a time."""

    stage: IoStage
    request: Request | None = None  # the request being dispatched; None when IDLE
    task: RequestTask | None = None  # the RequestTask created, in stage TASK_CREATED


class WorkerStage(enum.Enum):
    """Where an executor thread is in running its task."""

    IDLE = "IDLE"  # blocked in queue.take()
    TAKEN = "TAKEN"  # has a RequestTask whose run() has not started the processor yet
    PASSED_PUT_CHECK = "PASSED_PUT_CHECK"  # put pre-check saw the store not busy; lock not taken
    IN_PUT_LOCK = "IN_PUT_LOCK"  # holds the commit-log put lock


@record
class Worker:
    """One thread of a fixed executor (core = max; threads are created on demand, never retire)."""

    stage: WorkerStage
    task: RequestTask | None = None  # the task being run; None when IDLE


@record
class Executor:
    """A BrokerFixedThreadPoolExecutor / FutureTaskExtThreadPoolExecutor and its LinkedBlockingQueue."""

    name: ExecutorName
    queue: tuple[QueueElement, ...]  # the blocking queue; index 0 is the head
    workers: tuple[Worker, ...]  # threads started so far (at most the configured count)


@record
class MappedFile:
    """A commit-log MappedFile that has not been retired yet."""

    index: int  # position of the file in the commit log (file name order)
    wrote: int  # wrotePosition, in messages
    committed: int  # committedPosition, in messages (moves only for files with a write buffer)
    write_buffer: int | None  # MappedFile.writeBuffer: id of the pool buffer; None = writes go to the mmap



class FastFailurePhase(enum.Enum):
    """Where the BrokerFastFailureScheduledThread is within one run of its task."""

    IDLE = "IDLE"  # between runs
    DRAINING_BUSY = "DRAINING_BUSY"  # phase 1: the while(isOSPageCacheBusy()) loop over the send queue
    CLEANING = "CLEANING"  # phase 2: cleanExpiredRequestInQueue over the cleaned queues, in order


@record
class Response:
    """A response written to the channel."""

    request_id: int  # the opaque it echoes
    code: ResponseCode
    remark: str | None  # None where the broker's text is implementation-specific (an exception's description)
    kind: ResponseKind  # which code path wrote it (not on the wire: the remark's tag or the code tells it)


def recorded_as(r: Response, code: int, remark: str | None) -> bool:
    """Whether an answer seen on the wire (its code and remark) is the response ``r`` the spec wrote.

    The code and the remark must be ``r``'s, except where the spec leaves them to the
    implementation: a remark of None (an exception's text, a put's SUCCESS) matches any remark,
    and a processor's own answer (kind PROCESSOR: a pull's PULL_NOT_FOUND, an admin command's
    result; the spec writes SUCCESS in its place) matches any code and any remark; but neither
    matches a flow-control remark, which only the code paths the spec models write.
    """
    if r.kind is ResponseKind.PROCESSOR:
        return not is_flow_control_remark(remark)
    if r.remark is None:
        return code == int(r.code) and not is_flow_control_remark(remark)
    return code == int(r.code) and r.remark == remark


def written_as(written: tuple[Response, ...], seen: Sequence[tuple[int | None, int, str | None]]) -> bool:
    """Whether the responses a step wrote are the answers seen (request, code, remark), in order (:func:`recorded_as`)."""
    return len(written) == len(seen) and all(
        r.request_id == request and recorded_as(r, code, remark) for r, (request, code, remark) in zip(written, seen)
    )


@record
class Outputs:
    """What one step did besides changing the state. Empty for most steps.

    A request is *settled* by the step that answers it or finishes it without an answer; from
    then on nothing in the broker refers to it, so no state remembers it either.
    """

    responses: tuple[Response, ...] = ()  # written to channels, in order
    finished_silently: tuple[int, ...] = ()  # requests settled with no response (oneway, or a null answer)
    started: tuple[int, ...] = ()  # requests whose processor body this step began to run

    @property
    def settled(self) -> tuple[int, ...]:
        """The requests this step settled: answered or finished silently."""
        return tuple(r.request_id for r in self.responses) + self.finished_silently


NO_OUTPUTS = Outputs()

Next = tuple["BrokerState", Outputs]
"""What an effect returns: the next state and the step's outputs."""


@record
class Bucket:
    """A topic's limiter (source 004's rateLimiterMap entry)."""

    resource: str  # the topic (or %RETRY% topic) limited
    created_at: int  # broker clock (ms) when computeIfAbsent created it: the stopwatch's zero
    bucket: TokenBucket


@record
class BrokerState:
    """One broker: remoting threads, executors, commit log, pool, fast failure, limiter, clock."""

    now: int  # SystemClock.now(): the broker's wall clock, in ms
    next_request_id: int  # opaque of the next request to arrive
    next_foreign_id: int  # id of the next non-RequestTask element submitted
    io_threads: tuple[IoThread, ...]  # the remoting threads
    executors: tuple[Executor, ...]  # in the configuration's order
    lock: PutLock  # CommitLog.putMessageLock and beginTimeInLock
    files: tuple[MappedFile, ...]  # the commit log's live files; the last is the one being written
    available_buffers: tuple[int, ...]  # TransientStorePool.availableBuffers; index 0 is the deque head
    fast_failure_phase: FastFailurePhase  # where the scheduler thread is
    fast_failure_queue: int  # phase 2: index into the cleaned queues of the queue being scanned
    fast_failure_scan_wait: int  # phase 2: the maxWait argument of the current cleanExpiredRequestInQueue call
    fast_failure_next_run: int  # the fixed-rate schedule's next start time (ms)
    fast_failure_enable: bool  # brokerFastFailureEnable, read at the start of each run
    queue_waits: tuple[tuple[ExecutorName, int], ...]  # waitTimeMillsIn*Queue, read at each run
    buckets: tuple[Bucket, ...]  # the limiter's rateLimiterMap, sorted by resource

    def executor(self, name: ExecutorName) -> Executor:
        """The executor named ``name``."""
        for e in self.executors:
            if e.name is name:
                return e
        raise KeyError(f"no {name.value} executor in this state")

    def wait_for(self, name: ExecutorName) -> int:
        """The current max wait of a cleaned queue."""
        for queue, wait in self.queue_waits:
            if queue is name:
                return wait
        raise KeyError(f"{name.value} queue is not cleaned")

    def requests_inside(self) -> list[int]:
        """Ids of the requests the broker holds: on a remoting thread, in a queue, or on a worker."""
        ids = [io.request.id for io in self.io_threads if io.request is not None]
        for e in self.executors:
            ids += [t.request.id for t in e.queue if isinstance(t, RequestTask)]
            ids += [w.task.request.id for w in e.workers if w.task is not None]
        return ids


def initial_state(config: BrokerConfig) -> BrokerState:
    """The broker right after start(): threads not yet created, pool initialised if enabled.

    Source: TransientStorePool.init (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/TransientStorePool.java#L47-L57) (allocates poolSize buffers, ``offer`` appends each at the
    tail, so buffer 0 is at the head) runs only if the pool is enabled;
    BrokerFastFailure.start (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L82-L91) schedules its first run 1000 ms after start.
    """
    return BrokerState(
        now=config.start_time_ms,
        next_request_id=1,
        next_foreign_id=1,
        io_threads=tuple(IoThread(IoStage.IDLE) for _ in range(config.io_threads)),
        executors=tuple(Executor(e.name, (), ()) for e in config.executors),
        lock=FREE_LOCK,
        files=(),
        available_buffers=tuple(range(config.transient_store_pool_size)) if config.pool_enabled else (),
        fast_failure_phase=FastFailurePhase.IDLE,
        fast_failure_queue=0,
        fast_failure_scan_wait=0,
        fast_failure_next_run=config.start_time_ms + config.fast_failure_initial_delay_ms,
        fast_failure_enable=config.fast_failure_enable,
        queue_waits=config.queue_waits,
        buckets=(),
    )


# -- Small helpers the actions' effects share ----------------------------------------------------


def with_io_thread(s: BrokerState, index: int, io: IoThread) -> BrokerState:
    """``s`` with remoting thread ``index`` replaced."""
    return replace(s, io_threads=s.io_threads[:index] + (io,) + s.io_threads[index + 1 :])


def with_executor(s: BrokerState, executor: Executor) -> BrokerState:
    """``s`` with the executor of the same name replaced."""
    return replace(s, executors=tuple(executor if e.name is executor.name else e for e in s.executors))


def with_worker(executor: Executor, index: int, worker: Worker) -> Executor:
    """``executor`` with worker ``index`` replaced."""
    return replace(executor, workers=executor.workers[:index] + (worker,) + executor.workers[index + 1 :])


def settle(request: Request, response: Response | None, started: bool = False) -> Outputs:
    """The outputs that finish ``request``: ``response`` written, or nothing written (silently).

    ``started``: the same step also began the request's processor.
    """
    begun = (request.id,) if started else ()
    if response is None:
        return Outputs(finished_silently=(request.id,), started=begun)
    return Outputs(responses=(response,), started=begun)
