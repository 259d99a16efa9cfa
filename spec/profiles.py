"""Version profiles: every place where RocketMQ versions differ, as data.

A profile is a frozen record, one per release. Each field's comment says what it decides and
which releases have which value; the spec never tests a version number, it reads a field.
:mod:`spec.releases` builds every release's profile from the releases where each field changed,
and cites the source of each change.
"""

from __future__ import annotations

import enum

from spec.codes import PUT_CODES, ResponseCode
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
    CLIENT_MANAGE = "clientManage"  # clientManageExecutor
    CONSUMER_MANAGE = "consumerManage"  # consumerManageExecutor
    REPLY = "reply"  # replyMessageExecutor (4.6.0+)
    LOAD_BALANCE = "loadBalance"  # loadBalanceExecutor (5.0.0+)
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

    executor_of_code: tuple[tuple[int, ExecutorName], ...]
    """Request code → executor: BrokerController.registerProcessor. Codes absent here have no
    registered processor and fall to the default processor (AdminBrokerProcessor) on the admin
    executor. END_TRANSACTION is on the send executor in 4.0.0–4.3.0 and on endTransaction from
    4.3.1; RECALL_MESSAGE on send from 5.3.2."""

    admin_codes: frozenset[int]
    """The codes AdminBrokerProcessor's switch answers itself (SUCCESS, in the spec); any other code
    that reaches it takes the ``default:`` branch (:attr:`admin_answers_unknown_code`)."""

    executors: tuple[tuple[ExecutorName, ExecutorDefaults], ...]
    """The executors and their defaults. Source: C/BrokerConfig.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/common/src/main/java/org/apache/rocketmq/common/BrokerConfig.java#L29-L2063)."""

    cleaned_queues: tuple[tuple[ExecutorName, int], ...]
    """Queues BrokerFastFailure phase 2 cleans, in order, with their default max wait (ms).
    Source: B/latency/BrokerFastFailure.java cleanExpiredRequest (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L93-L121): send, pull,
    heartbeat, endTransaction in 4.3.1–4.9.8; + litePull, ack in 5.0.0–5.2.0; + adminBroker
    from 5.3.0."""

    dispatch_answers_oneway: bool
    """Whether REQUEST_CODE_NOT_SUPPORTED and [REJECTREQUEST] are written for a oneway request.
    True in 4.0.0–5.0.0 (written unconditionally); False from 5.1.0 (writeResponse drops them).
    [OVERLOAD] is never written for oneway, in any version.
    Source: R/netty/NettyRemotingAbstract.java processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317) (table in 1.1)."""

    pc_synchronized_code: ResponseCode
    """Code of the [PC_SYNCHRONIZED] response: SYSTEM_ERROR in 4.0.0–5.2.0, SYSTEM_BUSY from
    5.3.0 (commit 7a5ea90cb7, ISSUE #8053). Source: B/processor/SendMessageProcessor.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java#L81-L717)."""

    page_cache_busy_status: str
    """The PutMessageStatus constant for a busy pre-check: OS_PAGECACHE_BUSY in 4.x,
    OS_PAGE_CACHE_BUSY from 5.0.0 (S/PutMessageStatus.java). CONSUMER_SEND_MSG_BACK answers
    SYSTEM_ERROR with this name as its remark (its processor has no [PC_SYNCHRONIZED] mapping)."""

    admin_answers_unknown_code: bool
    """Whether the default AdminBrokerProcessor answers a code it does not know with
    REQUEST_CODE_NOT_SUPPORTED (``getUnknownCmdResponse``). False in 4.0.0–4.9.0, where its
    ``default:`` branch returns null and the request gets no response at all (the client times
    out); True from 4.9.1 (commit 9a5ec9082f). Source: B/processor/AdminBrokerProcessor.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java#L234-L3463)."""

    begin_time_reset_in_finally: bool
    """Whether CommitLog resets beginTimeInLock in ``finally`` (so an exception inside the lock
    cannot leave it set). True only in 4.9.3–4.9.8 (fix c6aeb782e5, ISSUE #3459); False in
    4.0.0–4.9.2 and 5.0.0–HEAD. Source: S/CommitLog.java putMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-4.6.0/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L553-L674; asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098)/asyncPutMessage."""

    fast_failure_switch: bool
    """Whether brokerFastFailureEnable gates each tick: no switch in 4.0.0–4.1.0, True from 4.2.0.
    Source: B/latency/BrokerFastFailure.java start (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L82-L91)()."""

    put_lock: PutLockKind
    """Default put lock: SPIN in 4.0.0–4.9.0, REENTRANT from 4.9.1 (commit 5fe0041686).
    The spec treats both as a non-fair mutex; the reference implements each."""

    pool_requires_async_flush: bool
    """Whether the TransientStorePool is used only with ASYNC_FLUSH: True in 4.0.0–4.9.8
    (MessageStoreConfig.isTransientStorePoolEnable), False from 5.0.0 (commit 821b91f0a2)."""

    sync_retry_codes: frozenset[ResponseCode]
    """Broker codes on which a SYNC send is retried. The six classic codes in 4.0.0–5.2.0;
    + SYSTEM_BUSY from 5.3.0 (e5b357c3df); + GO_AWAY from 5.3.1.
    Source: DefaultMQProducerImpl.sendDefaultImpl at 4.9.8
    (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/client/src/main/java/org/apache/rocketmq/client/impl/producer/DefaultMQProducerImpl.java#L537-L670),
    DefaultMQProducer.retryResponseCodes at 5.3.1
    (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.1/client/src/main/java/org/apache/rocketmq/client/producer/DefaultMQProducer.java#L76-L85)."""

    def executor_for(self, code: int) -> ExecutorName:
        """The executor a request with this code is submitted to (the default processor's if unregistered)."""
        for registered, executor in self.executor_of_code:
            if registered == code:
                return executor
        return ExecutorName.ADMIN

    def writes_commit_log(self, code: int) -> bool:
        """Whether SendMessageProcessor serves this code: a send-type code the release registers (a
        send code it does not register, SEND_BATCH_MESSAGE in 4.0.0, goes to the admin processor)."""
        return code in PUT_CODES and self.has_processor_for(code)

    def has_processor_for(self, code: int) -> bool:
        """Whether ``registerProcessor`` registered this code (else the default processor serves it)."""
        return any(registered == code for registered, _ in self.executor_of_code)
