"""Executor worker threads: take the queue head, run the processor, and for sends, the put path.

A worker blocks in ``queue.take()``; the element it gets is a FutureTaskExt whose RequestTask
runs the processor only if ``stopRun`` is false (corner 26). For a send, the processor checks
``isOSPageCacheBusy()`` once more before the put (``[PC_SYNCHRONIZED]``, corner 6), then takes
the put lock, stamps beginTimeInLock, appends, resets the stamp and unlocks.

Simplifications, each for a state space a person can still read:
- Only the send-type codes (SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE,
  CONSUMER_SEND_MSG_BACK) write to the commit log. END_TRANSACTION and RECALL_MESSAGE also write
  in the broker, but they neither reject at dispatch nor map OS_PAGE_CACHE_BUSY to
  [PC_SYNCHRONIZED]; the spec completes them in one step. Their queueing (the part that matters
  for overload) is modelled.
- The store's other pre-checks (shutdown, slave, not writeable, message size) and flush/HA waits
  after the put are left out: they do not touch the lock, the pool or the queues.
- A successful response's remark is left unspecified (None): processors fill it variously.

Source: R/netty/RequestTask.java run (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L78-L81) (4.0.0–HEAD); B/processor/SendMessageProcessor.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java#L81-L717);
S/DefaultMessageStore.java putMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java#L648-L650) / asyncPutMessage and B/util/HookUtils.checkBeforePutMessage; S/CommitLog.java (asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098).
"""

from __future__ import annotations

from typing import Final

from spec.codes import PC_SYNCHRONIZED_REMARK, not_supported_remark, RequestCode, ResponseCode, ResponseKind
from spec.config import BrokerConfig
from spec.frozen import record, replace
from spec.profiles import ExecutorName, Profile
from spec.putlock import Holder, acquire_for_put, is_os_page_cache_busy, release_after_put, throw_inside_lock
from spec.state import (
    NO_OUTPUTS,
    BrokerState,
    Executor,
    ForeignTask,
    Next,
    Outputs,
    QueueElement,
    Request,
    RequestTask,
    Response,
    settle,
    with_executor,
    with_worker,
    Worker,
    WorkerStage,
)
from spec.storepool import append_message, create_mapped_file, current_file_has_room
from spec.actors import Fault, WorkerStep

IDLE_WORKER = Worker(WorkerStage.IDLE)



def holder_of(executor: ExecutorName, worker: int) -> Holder:
    """The put-lock holder id of a worker thread."""
    return (executor.value, worker)


def busy_answer(profile: Profile, code: int) -> tuple[ResponseCode, str]:
    """The answer to a put whose pre-check found the store busy.

    SendMessageProcessor maps OS_PAGE(_)CACHE_BUSY to ``[PC_SYNCHRONIZED]`` with the profile's
    code (SYSTEM_ERROR ≤ 5.2.0, SYSTEM_BUSY ≥ 5.3.0); the CONSUMER_SEND_MSG_BACK path answers
    SYSTEM_ERROR with the status name as the remark.
    Source: SendMessageProcessor.handlePutMessageResult (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java#L367-L545);
    consumerSendMsgBack in SendMessageProcessor (4.3.2, https://github.com/apache/rocketmq/blob/rocketmq-all-4.3.2/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java#L98-L249)
    / AbstractSendMessageProcessor (5.3.3, https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/AbstractSendMessageProcessor.java#L92-L334).
    """
    if code == RequestCode.CONSUMER_SEND_MSG_BACK:
        return ResponseCode.SYSTEM_ERROR, profile.page_cache_busy_status
    return profile.pc_synchronized_code, PC_SYNCHRONIZED_REMARK


def _worker(s: BrokerState, name: ExecutorName, index: int) -> tuple[Executor, Worker] | None:
    """The executor and its worker ``index``, if both exist."""
    try:
        executor = s.executor(name)
    except KeyError:
        return None
    if not 0 <= index < len(executor.workers):
        return None
    return executor, executor.workers[index]


def _idle_with_head(s: BrokerState, a: WorkerStep) -> tuple[Executor, QueueElement] | None:
    found = _worker(s, a.executor, a.worker)
    if found is None:
        return None
    executor, worker = found
    if worker.stage is not WorkerStage.IDLE or not executor.queue:
        return None
    return executor, executor.queue[0]


def _in_stage(s: BrokerState, name: ExecutorName, index: int, stage: WorkerStage) -> tuple[Executor, RequestTask] | None:
    found = _worker(s, name, index)
    if found is None:
        return None
    executor, worker = found
    if worker.stage is not stage or worker.task is None:
        return None
    return executor, worker.task


def _finish(
    s: BrokerState, executor: Executor, index: int, request: Request, response: Response | None, started: bool = False
) -> Next:
    """The worker goes back to ``take()``; the handler writes the response unless the request is oneway.

    Source: NettyRemotingAbstract.processRequestCommand's handler: ``if (!cmd.isOnewayRPC()) write`` (4.x–5.0.0,
    https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L192-L281), ``writeResponse`` (5.1.0+,
    https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L209-L251).
    """
    s = with_executor(s, with_worker(executor, index, IDLE_WORKER))
    return s, settle(request, None if request.oneway else response, started)


# -- Taking the head -------------------------------------------------------------------------------


@record
class WorkerTakesTask(WorkerStep):
    """An idle worker takes the queue head, a live RequestTask.

    Changes: executors
    """


def worker_takes_task_enabled(config: BrokerConfig, s: BrokerState, a: WorkerTakesTask) -> bool:
    """Guard: the worker is idle and the head is a RequestTask whose stopRun is false.

    Source: ThreadPoolExecutor.getTask: ``workQueue.take()`` returns the head; RequestTask.run (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L78-L81)
    checks ``stopRun``.
    """
    found = _idle_with_head(s, a)
    return found is not None and isinstance(found[1], RequestTask) and not found[1].stop_run


def worker_takes_task(config: BrokerConfig, s: BrokerState, a: WorkerTakesTask) -> Next:
    """Effect: ``queue.take()`` removes the head; the worker holds it.

    Source: ThreadPoolExecutor.getTask / runWorker (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/ThreadPoolExecutor.html); LinkedBlockingQueue is FIFO (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/LinkedBlockingQueue.html).
    """
    found = _idle_with_head(s, a)
    assert found is not None
    executor, task = found
    assert isinstance(task, RequestTask)
    executor = replace(executor, queue=executor.queue[1:])
    return with_executor(s, with_worker(executor, a.worker, Worker(WorkerStage.TAKEN, task))), NO_OUTPUTS


@record
class WorkerDiscardsCancelledTask(WorkerStep):
    """An idle worker takes a head whose stopRun is set: ``RequestTask.run`` does nothing, sends nothing.

    Changes: executors
    """


def worker_discards_cancelled_task_enabled(
    config: BrokerConfig, s: BrokerState, a: WorkerDiscardsCancelledTask
) -> bool:
    """Guard: the worker is idle and the head is a RequestTask with stopRun set.

    Unreachable in the Java broker (stopRun is set only after a successful removal); kept
    because another implementation can reach it, and its traces must be judged.
    Source: R/netty/RequestTask.java run (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L78-L81): ``if (!this.stopRun)`` (corner 26).
    """
    found = _idle_with_head(s, a)
    return found is not None and isinstance(found[1], RequestTask) and found[1].stop_run


def worker_discards_cancelled_task(
    config: BrokerConfig, s: BrokerState, a: WorkerDiscardsCancelledTask
) -> Next:
    """Effect: ``RequestTask.run``: ``if (!stopRun) runnable.run()``: nothing runs, nothing is sent.

    Source: R/netty/RequestTask.java run (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L78-L81), 4.0.0–HEAD (corner 26).
    """
    found = _idle_with_head(s, a)
    assert found is not None
    executor, _ = found
    return with_executor(s, replace(executor, queue=executor.queue[1:])), NO_OUTPUTS


@record
class WorkerRunsForeignTask(WorkerStep):
    """An idle worker takes and runs a head that is not a RequestTask.

    Changes: executors
    """


def worker_runs_foreign_task_enabled(config: BrokerConfig, s: BrokerState, a: WorkerRunsForeignTask) -> bool:
    """Guard: the worker is idle and the head is not a RequestTask.

    Source: ThreadPoolExecutor.getTask (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/ThreadPoolExecutor.html) returns whatever the queue holds; only a RequestTask has
    stopRun.
    """
    found = _idle_with_head(s, a)
    return found is not None and isinstance(found[1], ForeignTask)


def worker_runs_foreign_task(config: BrokerConfig, s: BrokerState, a: WorkerRunsForeignTask) -> Next:
    """Effect: the element leaves the queue and runs; what it does is outside the spec."""
    found = _idle_with_head(s, a)
    assert found is not None
    executor, _ = found
    return with_executor(s, replace(executor, queue=executor.queue[1:])), NO_OUTPUTS


# -- Processing --------------------------------------------------------------------------------------


@record
class WorkerProcessesRequest(WorkerStep):
    """A worker runs a request that does not write to the commit log and answers it.

    Changes: executors
    """


def worker_processes_request_enabled(config: BrokerConfig, s: BrokerState, a: WorkerProcessesRequest) -> bool:
    """Guard: the worker holds a task whose request does not write to the commit log.

    Source: the processor table (BrokerController.registerProcessor, https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java#L1077-L1204,
    per release in :mod:`spec.releases`): only the send-type
    processors reach the store.
    """
    found = _in_stage(s, a.executor, a.worker, WorkerStage.TAKEN)
    return found is not None and not config.profile.writes_commit_log(found[1].request.code)


def worker_processes_request(config: BrokerConfig, s: BrokerState, a: WorkerProcessesRequest) -> Next:
    """Effect: the processor answers with its own result; the default processor answers a code it does not know
    with REQUEST_CODE_NOT_SUPPORTED (4.9.1+) or returns null, so nothing is written (4.0.0–4.9.0).

    Source: B/processor/AdminBrokerProcessor.java (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java#L140-L1676) ``default:`` branch (getUnknownCmdResponse
    from 4.9.1, commit 9a5ec9082f). Simplification: a processor's own result (a pull's PULL_NOT_FOUND,
    an admin command's answer) is its business, not flow control's; the spec writes SUCCESS of kind
    PROCESSOR in its place, and a recorded answer of any code matches it unless its remark is a
    flow-control one (:func:`spec.state.recorded_as`).
    """
    found = _in_stage(s, a.executor, a.worker, WorkerStage.TAKEN)
    assert found is not None
    executor, task = found
    request = task.request
    profile = config.profile
    response: Response | None
    if profile.has_processor_for(request.code) or request.code in profile.admin_codes:
        response = Response(request.id, ResponseCode.SUCCESS, None, ResponseKind.PROCESSOR)
    elif profile.admin_answers_unknown_code:
        response = Response(
            request.id,
            ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
            not_supported_remark(request.code),
            ResponseKind.NOT_SUPPORTED,
        )
    else:
        response = None
    return _finish(s, executor, a.worker, request, response, started=True)


@record
class WorkerFindsPageCacheBusy(WorkerStep):
    """The put pre-check finds the store busy: ``[PC_SYNCHRONIZED]`` (code per profile).

    Changes: executors
    """


def worker_finds_page_cache_busy_enabled(config: BrokerConfig, s: BrokerState, a: WorkerFindsPageCacheBusy) -> bool:
    """Guard: the worker holds a put and ``isOSPageCacheBusy()`` is true now.

    Source: DefaultMessageStore.putMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java#L648-L650) (4.0.0–4.6.x), checkStoreStatus (4.7.0–4.9.8),
    HookUtils.checkBeforePutMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/util/HookUtils.java#L60-L109) (5.0.0+): ``isOSPageCacheBusy()``.
    """
    found = _in_stage(s, a.executor, a.worker, WorkerStage.TAKEN)
    return (
        found is not None
        and config.profile.writes_commit_log(found[1].request.code)
        and is_os_page_cache_busy(s.lock, s.now, config.os_page_cache_busy_timeout_ms)
    )


def worker_finds_page_cache_busy(config: BrokerConfig, s: BrokerState, a: WorkerFindsPageCacheBusy) -> Next:
    """Effect: PutMessageStatus OS_PAGE(_)CACHE_BUSY → ``[PC_SYNCHRONIZED]broker busy, ...``.

    A task can pass the dispatch check and fail this one: the store became busy while it was
    queued (corner 6). Source: DefaultMessageStore.putMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java#L648-L650) (4.0.0–4.6.x),
    checkStoreStatus (4.7.0–4.9.8), HookUtils.checkBeforePutMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/util/HookUtils.java#L60-L109) (5.0.0+).
    """
    found = _in_stage(s, a.executor, a.worker, WorkerStage.TAKEN)
    assert found is not None
    executor, task = found
    request = task.request
    code, remark = busy_answer(config.profile, request.code)
    response = Response(request.id, code, remark, ResponseKind.PC_SYNCHRONIZED)
    return _finish(s, executor, a.worker, request, response, started=True)


@record
class WorkerPassesPutCheck(WorkerStep):
    """The put pre-check finds the store not busy; the worker goes on to the put lock.

    Changes: executors
    """


def worker_passes_put_check_enabled(config: BrokerConfig, s: BrokerState, a: WorkerPassesPutCheck) -> bool:
    """Guard: the worker holds a put and the store is not busy now.

    Source: as :func:`worker_finds_page_cache_busy_enabled` (HookUtils.checkBeforePutMessage,
    https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/util/HookUtils.java#L60-L109), the check false.
    """
    found = _in_stage(s, a.executor, a.worker, WorkerStage.TAKEN)
    return (
        found is not None
        and config.profile.writes_commit_log(found[1].request.code)
        and not is_os_page_cache_busy(s.lock, s.now, config.os_page_cache_busy_timeout_ms)
    )


def worker_passes_put_check(config: BrokerConfig, s: BrokerState, a: WorkerPassesPutCheck) -> Next:
    """Effect: the worker goes on to ``putMessageLock.lock()``.

    Source: as :func:`worker_finds_page_cache_busy` (HookUtils.checkBeforePutMessage,
    https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/util/HookUtils.java#L60-L109). The check and the lock are separate steps:
    the store may turn busy in between, and the worker then waits without being "busy" itself.
    """
    found = _in_stage(s, a.executor, a.worker, WorkerStage.TAKEN)
    assert found is not None
    executor, task = found
    s = with_executor(s, with_worker(executor, a.worker, Worker(WorkerStage.PASSED_PUT_CHECK, task)))
    return s, Outputs(started=(task.request.id,))


# -- The put lock ------------------------------------------------------------------------------------


@record
class WorkerAcquiresPutLock(WorkerStep):
    """The worker takes the commit-log put lock and stamps beginTimeInLock.

    Changes: executors, lock
    """


def worker_acquires_put_lock_enabled(config: BrokerConfig, s: BrokerState, a: WorkerAcquiresPutLock) -> bool:
    """Guard: the worker passed the pre-check and nobody holds the lock (both locks are non-fair).

    Source: S/PutMessageSpinLock.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/PutMessageSpinLock.java#L24-L41) / S/PutMessageReentrantLock.java lock (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/PutMessageReentrantLock.java#L28-L30)(): both non-fair, free
    when unheld.
    """
    return _in_stage(s, a.executor, a.worker, WorkerStage.PASSED_PUT_CHECK) is not None and s.lock.holder is None


def worker_acquires_put_lock(config: BrokerConfig, s: BrokerState, a: WorkerAcquiresPutLock) -> Next:
    """Effect: the worker holds the lock; beginTimeInLock = now (only the holder's time counts, corner 3).

    Source: S/CommitLog.java putMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L57-L1782) (4.x) / asyncPutMessage (4.7.0+).
    """
    found = _in_stage(s, a.executor, a.worker, WorkerStage.PASSED_PUT_CHECK)
    assert found is not None
    executor, task = found
    s = replace(s, lock=acquire_for_put(s.lock, holder_of(a.executor, a.worker), s.now))
    return with_executor(s, with_worker(executor, a.worker, Worker(WorkerStage.IN_PUT_LOCK, task))), NO_OUTPUTS


@record
class WorkerCreatesMappedFile(WorkerStep):
    """Inside the lock, the current file is full (or none exists): a new file borrows a pool buffer.

    Changes: files, available_buffers
    """


def worker_creates_mapped_file_enabled(config: BrokerConfig, s: BrokerState, a: WorkerCreatesMappedFile) -> bool:
    """Guard: the worker holds the lock and the last file is full (or there is none).

    Source: S/CommitLog.java putMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-4.6.0/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L553-L674; asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098): ``mappedFile == null || mappedFile.isFull()`` →
    getLastMappedFile(0).
    """
    return _in_stage(s, a.executor, a.worker, WorkerStage.IN_PUT_LOCK) is not None and not current_file_has_room(
        s.files, config.mapped_file_size
    )


def worker_creates_mapped_file(config: BrokerConfig, s: BrokerState, a: WorkerCreatesMappedFile) -> Next:
    """Effect: ``mappedFileQueue.getLastMappedFile(0)`` creates the next file, borrowing a buffer.

    Source: S/CommitLog.java (asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098) (the put path's getLastMappedFile), S/AllocateMappedFileService.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/AllocateMappedFileService.java#L39-L322),
    S/MappedFile.java init (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/store/src/main/java/org/apache/rocketmq/store/MappedFile.java#L155-L160); see :func:`spec.storepool.create_mapped_file`.
    """
    files, available = create_mapped_file(s.files, s.available_buffers, config.pool_enabled, config.mapped_file_size)
    return replace(s, files=files, available_buffers=available), NO_OUTPUTS


@record
class WorkerAppendsAndUnlocks(WorkerStep):
    """The worker appends the message, resets beginTimeInLock, unlocks, and answers SUCCESS.

    Changes: executors, files, lock
    """


def worker_appends_and_unlocks_enabled(config: BrokerConfig, s: BrokerState, a: WorkerAppendsAndUnlocks) -> bool:
    """Guard: the worker holds the lock and the last file has room.

    Source: S/CommitLog.java putMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-4.6.0/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L553-L674; asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098): appendMessageCallback on a file with room.
    """
    return _in_stage(s, a.executor, a.worker, WorkerStage.IN_PUT_LOCK) is not None and current_file_has_room(
        s.files, config.mapped_file_size
    )


def worker_appends_and_unlocks(config: BrokerConfig, s: BrokerState, a: WorkerAppendsAndUnlocks) -> Next:
    """Effect: append one message; beginTimeInLock = 0; unlock; answer SUCCESS (PUT_OK).

    Source: S/CommitLog.java (asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098): appendMessage, then the reset at the normal end (inside the try in
    4.0.0–4.9.2 and 5.x, in ``finally`` in 4.9.3–4.9.8), then unlock in ``finally``.
    Simplification: the hold time is the clock's advance between acquiring and this step.
    """
    found = _in_stage(s, a.executor, a.worker, WorkerStage.IN_PUT_LOCK)
    assert found is not None
    executor, task = found
    request = task.request
    s = replace(s, files=append_message(s.files, config.mapped_file_size), lock=release_after_put(s.lock))
    return _finish(s, executor, a.worker, request, Response(request.id, ResponseCode.SUCCESS, None, ResponseKind.SUCCESS))


@record
class WorkerThrowsInsideLock(Fault):
    """Fault: an exception escapes the critical section; ``finally`` unlocks; SYSTEM_ERROR is answered.

    Changes: executors, lock
    """

    executor: ExecutorName
    worker: int


def worker_throws_inside_lock_enabled(config: BrokerConfig, s: BrokerState, a: WorkerThrowsInsideLock) -> bool:
    """Guard: the worker holds the lock (a fault the environment may inject at any such point).

    Source: S/CommitLog.java putMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-4.6.0/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L553-L674; asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098): any Throwable between lock() and the reset (corner 4).
    """
    return _in_stage(s, a.executor, a.worker, WorkerStage.IN_PUT_LOCK) is not None


def worker_throws_inside_lock(config: BrokerConfig, s: BrokerState, a: WorkerThrowsInsideLock) -> Next:
    """Effect: ``finally`` unlocks; beginTimeInLock is reset only where the profile resets in ``finally``;
    the handler answers SYSTEM_ERROR with the exception's description (not for oneway).

    Source: S/CommitLog.java (asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098) (corner 4); the handler's ``catch (Throwable e)``
    writes SYSTEM_ERROR with ``exceptionSimpleDesc(e)``. The remark is left unspecified.
    """
    found = _in_stage(s, a.executor, a.worker, WorkerStage.IN_PUT_LOCK)
    assert found is not None
    executor, task = found
    request = task.request
    s = replace(s, lock=throw_inside_lock(s.lock, config.profile.begin_time_reset_in_finally))
    response = Response(request.id, ResponseCode.SYSTEM_ERROR, None, ResponseKind.EXCEPTION)
    return _finish(s, executor, a.worker, request, response)


# -- The steps a worker's stage offers --------------------------------------------------------------

#: The stage a worker is in when it may take each of its steps: each guard above is false for a
#: worker in any other stage (its first test is ``_idle_with_head`` or ``_in_stage``). So a search
#: over runs of the spec need try only the steps of each worker's own stage
#: (traces/checking/partial.py); tests/test_spec_actions.py holds the table to the guards.
STEP_STAGES: Final[dict[type[WorkerStep], tuple[WorkerStage, ...]]] = {
    WorkerTakesTask: (WorkerStage.IDLE,),
    WorkerDiscardsCancelledTask: (WorkerStage.IDLE,),
    WorkerRunsForeignTask: (WorkerStage.IDLE,),
    WorkerProcessesRequest: (WorkerStage.TAKEN,),
    WorkerFindsPageCacheBusy: (WorkerStage.TAKEN,),
    WorkerPassesPutCheck: (WorkerStage.TAKEN,),
    WorkerAcquiresPutLock: (WorkerStage.PASSED_PUT_CHECK,),
    WorkerCreatesMappedFile: (WorkerStage.IN_PUT_LOCK,),
    WorkerAppendsAndUnlocks: (WorkerStage.IN_PUT_LOCK,),
}
