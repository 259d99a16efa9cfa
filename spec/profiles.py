"""Version profiles: every place where RocketMQ versions differ, as data.

A profile is a frozen record. Each field's comment names the versions that have each value;
the spec never tests a version number, it reads a field. Adding a version is adding a record
to :data:`PROFILES`.

Sources: ``../shared/rocketmq/semantics.md`` (tables 1.4, 1.5, 2.3, 2.6, 3.3, 4.5, 5.3), which
digests apache/rocketmq at the tags named there; file paths are given per field.
"""

from __future__ import annotations

import enum

from spec.codes import RequestCode, ResponseCode
from spec.frozen import record


class ExecutorName(enum.Enum):
    """The broker executors (thread pools with a queue) the spec models."""

    SEND = "send"  # sendMessageExecutor
    PULL = "pull"  # pullMessageExecutor
    LITE_PULL = "litePull"  # litePullMessageExecutor (5.0.0+)
    HEARTBEAT = "heartbeat"  # heartbeatExecutor (4.3.0+)
    END_TRANSACTION = "endTransaction"  # endTransactionExecutor (4.3.1+)
    ACK = "ack"  # ackMessageExecutor (5.0.0+)
    QUERY = "query"  # queryMessageExecutor (4.2.0+)
    ADMIN = "admin"  # adminBrokerExecutor, the default processor's


class PutLockKind(enum.Enum):
    """Which PutMessageLock CommitLog uses (MessageStoreConfig.useReentrantLockWhenPutMessage)."""

    SPIN = "spin"  # S/PutMessageSpinLock.java: CAS loop on an AtomicBoolean
    REENTRANT = "reentrant"  # S/PutMessageReentrantLock.java: non-fair ReentrantLock


@record
class ThreadFormula:
    """A thread-count default written as ``min(base + per_processor × P, cap)``.

    P is ``Runtime.availableProcessors()``; ``cap`` None means no cap.
    """

    base: int
    per_processor: int
    cap: int | None = None

    def threads(self, processors: int) -> int:
        """The default thread count on a machine with ``processors`` cores."""
        n = self.base + self.per_processor * processors
        return n if self.cap is None else min(n, self.cap)


@record
class ExecutorDefaults:
    """Default shape of one executor: fixed size (core = max) and queue capacity (None = unbounded)."""

    threads: ThreadFormula
    capacity: int | None


@record
class Profile:
    """Everything the spec needs to know about one RocketMQ version."""

    version: str

    executor_of_code: tuple[tuple[RequestCode, ExecutorName], ...]
    """Request code → executor. Codes absent here have no registered processor and fall to the
    default processor (AdminBrokerProcessor) on the admin executor.
    Source: B/BrokerController.java registerProcessor(). END_TRANSACTION is on the send executor
    in 4.0.0–4.3.0 and on endTransaction from 4.3.1; RECALL_MESSAGE on send from 5.3.2."""

    executors: tuple[tuple[ExecutorName, ExecutorDefaults], ...]
    """The executors and their defaults. Source: C/BrokerConfig.java (table 1.5)."""

    cleaned_queues: tuple[tuple[ExecutorName, int], ...]
    """Queues BrokerFastFailure phase 2 cleans, in order, with their default max wait (ms).
    Source: B/latency/BrokerFastFailure.java cleanExpiredRequest (table 4.5): send, pull,
    heartbeat, endTransaction in 4.3.1–4.9.8; + litePull, ack in 5.0.0–5.2.0; + adminBroker
    from 5.3.0."""

    dispatch_answers_oneway: bool
    """Whether REQUEST_CODE_NOT_SUPPORTED and [REJECTREQUEST] are written for a oneway request.
    True in 4.0.0–5.0.0 (written unconditionally); False from 5.1.0 (writeResponse drops them).
    [OVERLOAD] is never written for oneway, in any version.
    Source: R/netty/NettyRemotingAbstract.java processRequestCommand (table in 1.1)."""

    pc_synchronized_code: ResponseCode
    """Code of the [PC_SYNCHRONIZED] response: SYSTEM_ERROR in 4.0.0–5.2.0, SYSTEM_BUSY from
    5.3.0 (commit 7a5ea90cb7, ISSUE #8053). Source: B/processor/SendMessageProcessor.java."""

    page_cache_busy_status: str
    """The PutMessageStatus constant for a busy pre-check: OS_PAGECACHE_BUSY in 4.x,
    OS_PAGE_CACHE_BUSY from 5.0.0 (S/PutMessageStatus.java). CONSUMER_SEND_MSG_BACK answers
    SYSTEM_ERROR with this name as its remark (its processor has no [PC_SYNCHRONIZED] mapping)."""

    admin_answers_unknown_code: bool
    """Whether the default AdminBrokerProcessor answers a code it does not know with
    REQUEST_CODE_NOT_SUPPORTED (``getUnknownCmdResponse``). False in 4.0.0–4.9.0, where its
    ``default:`` branch returns null and the request gets no response at all (the client times
    out); True from 4.9.1 (commit 9a5ec9082f). Source: B/processor/AdminBrokerProcessor.java."""

    begin_time_reset_in_finally: bool
    """Whether CommitLog resets beginTimeInLock in ``finally`` (so an exception inside the lock
    cannot leave it set). True only in 4.9.3–4.9.8 (fix c6aeb782e5, ISSUE #3459); False in
    4.0.0–4.9.2 and 5.0.0–HEAD. Source: S/CommitLog.java putMessage/asyncPutMessage (2.3)."""

    fast_failure_switch: bool
    """Whether brokerFastFailureEnable gates each tick: no switch in 4.0.0–4.1.0, True from 4.2.0.
    Source: B/latency/BrokerFastFailure.java start()."""

    put_lock: PutLockKind
    """Default put lock: SPIN in 4.0.0–4.9.0, REENTRANT from 4.9.1 (commit 5fe0041686).
    The spec treats both as a non-fair mutex; the reference implements each."""

    pool_requires_async_flush: bool
    """Whether the TransientStorePool is used only with ASYNC_FLUSH: True in 4.0.0–4.9.8
    (MessageStoreConfig.isTransientStorePoolEnable), False from 5.0.0 (commit 821b91f0a2)."""

    sync_retry_codes: frozenset[ResponseCode]
    """Broker codes on which a SYNC send is retried. The six classic codes in 4.0.0–5.2.0;
    + SYSTEM_BUSY from 5.3.0 (e5b357c3df); + GO_AWAY from 5.3.1.
    Source: CL/impl/producer/DefaultMQProducerImpl.sendDefaultImpl, DefaultMQProducer."""

    def executor_for(self, code: RequestCode) -> ExecutorName:
        """The executor a request with this code is submitted to (the default processor's if unregistered)."""
        for registered, executor in self.executor_of_code:
            if registered is code:
                return executor
        return ExecutorName.ADMIN

    def has_processor_for(self, code: RequestCode) -> bool:
        """Whether ``registerProcessor`` registered this code (else the default processor serves it)."""
        return any(registered is code for registered, _ in self.executor_of_code)


# -- The records ---------------------------------------------------------------------------

_CLASSIC_RETRY_CODES = frozenset(
    {
        ResponseCode.TOPIC_NOT_EXIST,
        ResponseCode.SERVICE_NOT_AVAILABLE,
        ResponseCode.SYSTEM_ERROR,
        ResponseCode.NO_PERMISSION,
        ResponseCode.NO_BUYER_ID,
        ResponseCode.NOT_IN_CURRENT_UNIT,
    }
)

_SEND_CODES = (
    (RequestCode.SEND_MESSAGE, ExecutorName.SEND),
    (RequestCode.SEND_MESSAGE_V2, ExecutorName.SEND),
    (RequestCode.SEND_BATCH_MESSAGE, ExecutorName.SEND),
    (RequestCode.CONSUMER_SEND_MSG_BACK, ExecutorName.SEND),
)

_PULL = ExecutorDefaults(ThreadFormula(16, 2), 100_000)
_QUERY = ExecutorDefaults(ThreadFormula(8, 1), 20_000)
_HEARTBEAT = ExecutorDefaults(ThreadFormula(0, 1, 32), 50_000)
_END_TRANSACTION = ExecutorDefaults(ThreadFormula(8, 2), 100_000)

PROFILE_4_3_2 = Profile(
    version="4.3.2",
    executor_of_code=_SEND_CODES
    + (
        (RequestCode.END_TRANSACTION, ExecutorName.END_TRANSACTION),
        (RequestCode.PULL_MESSAGE, ExecutorName.PULL),
        (RequestCode.QUERY_MESSAGE, ExecutorName.QUERY),
        (RequestCode.HEART_BEAT, ExecutorName.HEARTBEAT),
    ),
    executors=(
        (ExecutorName.SEND, ExecutorDefaults(ThreadFormula(1, 0), 10_000)),
        (ExecutorName.PULL, _PULL),
        (ExecutorName.QUERY, _QUERY),
        (ExecutorName.HEARTBEAT, _HEARTBEAT),
        (ExecutorName.END_TRANSACTION, _END_TRANSACTION),
        (ExecutorName.ADMIN, ExecutorDefaults(ThreadFormula(16, 0), None)),
    ),
    cleaned_queues=(
        (ExecutorName.SEND, 200),
        (ExecutorName.PULL, 5000),
        (ExecutorName.HEARTBEAT, 31000),
        (ExecutorName.END_TRANSACTION, 3000),
    ),
    dispatch_answers_oneway=True,
    pc_synchronized_code=ResponseCode.SYSTEM_ERROR,
    page_cache_busy_status="OS_PAGECACHE_BUSY",
    admin_answers_unknown_code=False,
    begin_time_reset_in_finally=False,
    fast_failure_switch=True,
    put_lock=PutLockKind.SPIN,
    pool_requires_async_flush=True,
    sync_retry_codes=_CLASSIC_RETRY_CODES,
)
"""4.3.2, the version of source articles 001–003. One send thread with the spin lock."""

PROFILE_4_9_8 = Profile(
    version="4.9.8",
    executor_of_code=PROFILE_4_3_2.executor_of_code,
    executors=(
        (ExecutorName.SEND, ExecutorDefaults(ThreadFormula(0, 1, 4), 10_000)),
        (ExecutorName.PULL, _PULL),
        (ExecutorName.QUERY, _QUERY),
        (ExecutorName.HEARTBEAT, _HEARTBEAT),
        (ExecutorName.END_TRANSACTION, _END_TRANSACTION),
        (ExecutorName.ADMIN, ExecutorDefaults(ThreadFormula(16, 0), None)),
    ),
    cleaned_queues=PROFILE_4_3_2.cleaned_queues,
    dispatch_answers_oneway=True,
    pc_synchronized_code=ResponseCode.SYSTEM_ERROR,
    page_cache_busy_status="OS_PAGECACHE_BUSY",
    admin_answers_unknown_code=True,
    begin_time_reset_in_finally=True,
    fast_failure_switch=True,
    put_lock=PutLockKind.REENTRANT,
    pool_requires_async_flush=True,
    sync_retry_codes=_CLASSIC_RETRY_CODES,
)
"""4.9.8, the last 4.x release: the only line that resets beginTimeInLock in ``finally``."""

PROFILE_5_3_3 = Profile(
    version="5.3.3",
    executor_of_code=_SEND_CODES
    + (
        (RequestCode.RECALL_MESSAGE, ExecutorName.SEND),
        (RequestCode.END_TRANSACTION, ExecutorName.END_TRANSACTION),
        (RequestCode.PULL_MESSAGE, ExecutorName.PULL),
        (RequestCode.LITE_PULL_MESSAGE, ExecutorName.LITE_PULL),
        (RequestCode.QUERY_MESSAGE, ExecutorName.QUERY),
        (RequestCode.HEART_BEAT, ExecutorName.HEARTBEAT),
        (RequestCode.ACK_MESSAGE, ExecutorName.ACK),
    ),
    executors=(
        (ExecutorName.SEND, ExecutorDefaults(ThreadFormula(0, 1, 4), 10_000)),
        (ExecutorName.PULL, _PULL),
        (ExecutorName.LITE_PULL, ExecutorDefaults(ThreadFormula(16, 2), 100_000)),
        (ExecutorName.QUERY, _QUERY),
        (ExecutorName.HEARTBEAT, _HEARTBEAT),
        (ExecutorName.END_TRANSACTION, _END_TRANSACTION),
        (ExecutorName.ACK, ExecutorDefaults(ThreadFormula(16, 0), 100_000)),
        (ExecutorName.ADMIN, ExecutorDefaults(ThreadFormula(16, 0), 10_000)),
    ),
    cleaned_queues=(
        (ExecutorName.SEND, 200),
        (ExecutorName.PULL, 5000),
        (ExecutorName.LITE_PULL, 5000),
        (ExecutorName.HEARTBEAT, 31000),
        (ExecutorName.END_TRANSACTION, 3000),
        (ExecutorName.ACK, 3000),
        (ExecutorName.ADMIN, 5000),
    ),
    dispatch_answers_oneway=False,
    pc_synchronized_code=ResponseCode.SYSTEM_BUSY,
    page_cache_busy_status="OS_PAGE_CACHE_BUSY",
    admin_answers_unknown_code=True,
    begin_time_reset_in_finally=False,
    fast_failure_switch=True,
    put_lock=PutLockKind.REENTRANT,
    pool_requires_async_flush=False,
    sync_retry_codes=_CLASSIC_RETRY_CODES | {ResponseCode.SYSTEM_BUSY, ResponseCode.GO_AWAY},
)
"""5.3.3, the newest release: SYSTEM_BUSY is retried, [PC_SYNCHRONIZED] is SYSTEM_BUSY, and the
stuck beginTimeInLock of 4.0–4.9.2 is back (the 5.x CommitLog rewrite lost the 4.9.3 fix)."""

PROFILES: dict[str, Profile] = {p.version: p for p in (PROFILE_4_3_2, PROFILE_4_9_8, PROFILE_5_3_3)}
DEFAULT_PROFILE = "5.3.3"


def profile(version: str) -> Profile:
    """The profile for ``version``; a clear error names the known ones."""
    try:
        return PROFILES[version]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise ValueError(f"unknown RocketMQ profile {version!r}; known profiles: {known}") from None
