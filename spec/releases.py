"""Every release of Apache RocketMQ from 4.0.0 to 5.3.3 as a profile, built from where each behaviour changed.

The spec never tests a version number: it reads a :class:`~spec.profiles.Profile`. This module
builds the profile of any release from tables of *changes*: each behaviour is the value it had in
4.0.0 and the releases where it changed (one row per change, citing the source at that release),
the executors are rows of the releases they exist in and their defaults, the processor table is
one row per ``registerProcessor`` call and the releases it is made in, and AdminBrokerProcessor's
switch is one row per ``case`` and its releases. Nothing is written out per release, so a
release between two others gets what the tables say, and a new release is one entry of
:data:`RELEASES` (plus rows for whatever it changed).

The releases are the tags of apache/rocketmq (``rocketmq-4.0.0-incubating``,
``rocketmq-all-4.1.0-incubating``, then ``rocketmq-all-X.Y.Z``); 4.5.0 has no tag there and is
left out. The rows of the processor table and of the admin switch were read from each tag's
``BrokerController.java`` and ``AdminBrokerProcessor.java``; each row's ``line`` is the line of the
call or ``case`` at its first release, and :func:`github` turns it into a link.

Simplifications: the "fast" (VIP) server's registrations are left out (a trace is of the main
server); the reply processor and the recall processor are processors that answer without the
commit log (their own puts are outside the model, like pulls and pops).
"""

from __future__ import annotations

from typing import Generic, TypeVar

from spec.codes import ResponseCode
from spec.frozen import record
from spec.profiles import ExecutorDefaults, ExecutorName, Profile, PutLockKind, ThreadFormula

RELEASES: tuple[str, ...] = (
    "4.0.0", "4.1.0", "4.2.0", "4.3.0", "4.3.1", "4.3.2", "4.4.0", "4.5.1", "4.5.2", "4.6.0", "4.6.1",
    "4.7.0", "4.7.1", "4.8.0", "4.9.0", "4.9.1", "4.9.2", "4.9.3", "4.9.4", "4.9.5", "4.9.6", "4.9.7",
    "4.9.8", "5.0.0", "5.1.0", "5.1.1", "5.1.2", "5.1.3", "5.1.4", "5.2.0", "5.3.0", "5.3.1", "5.3.2",
    "5.3.3",
)  # fmt: skip
"""Every release with a tag in apache/rocketmq, oldest first."""

EXPLORED: tuple[str, ...] = ("4.3.2", "4.9.8", "5.3.3")
"""The releases the small models, the lockstep suites and the mutants run on: 4.3.2 (source
articles 001–003, one send thread and the spin lock), 4.9.8 (the only line that resets
beginTimeInLock in ``finally``) and 5.3.3 (SYSTEM_BUSY retried, [PC_SYNCHRONIZED] as SYSTEM_BUSY)."""

DEFAULT_PROFILE = "5.3.3"

_ORDER = {release: i for i, release in enumerate(RELEASES)}


def _unknown(release: str) -> ValueError:
    """The error for a release the spec does not know: it names the known ones."""
    return ValueError(f"unknown RocketMQ release {release!r}; known releases: {', '.join(RELEASES)}")


def release_tag(release: str) -> str:
    """The git tag of ``release`` in apache/rocketmq."""
    if release not in _ORDER:
        raise _unknown(release)
    if release == "4.0.0":
        return "rocketmq-4.0.0-incubating"
    if release == "4.1.0":
        return "rocketmq-all-4.1.0-incubating"
    return f"rocketmq-all-{release}"


def github(release: str, path: str, first_line: int, last_line: int | None = None) -> str:
    """A link to ``path`` (from the repository root) at ``release``'s tag, lines ``first_line``–``last_line``."""
    lines = f"#L{first_line}" if last_line is None else f"#L{first_line}-L{last_line}"
    return f"https://github.com/apache/rocketmq/blob/{release_tag(release)}/{path}{lines}"


def _covers(first: str, last: str | None, release: str) -> bool:
    return _ORDER[first] <= _ORDER[release] and (last is None or _ORDER[release] <= _ORDER[last])


_B = "broker/src/main/java/org/apache/rocketmq/broker/"
_S = "store/src/main/java/org/apache/rocketmq/store/"
_CONTROLLER = _B + "BrokerController.java"
_ADMIN = _B + "processor/AdminBrokerProcessor.java"
_SEND_PROCESSOR = _B + "processor/SendMessageProcessor.java"
_FAST_FAILURE = _B + "latency/BrokerFastFailure.java"
_BROKER_CONFIG = "common/src/main/java/org/apache/rocketmq/common/BrokerConfig.java"
_STORE_CONFIG = _S + "config/MessageStoreConfig.java"
_REMOTING = "remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java"
_PRODUCER = "client/src/main/java/org/apache/rocketmq/client/producer/DefaultMQProducer.java"

T = TypeVar("T", covariant=True)


class Behaviour(Generic[T]):
    """One profile field: its value in 4.0.0, then each release where it changed, with the source there."""

    def __init__(self, field: str, changes: tuple[tuple[str, T, str], ...]) -> None:
        assert changes[0][0] == RELEASES[0], f"{field}: the first change must be 4.0.0's value"
        assert all(_ORDER[a[0]] < _ORDER[b[0]] for a, b in zip(changes, changes[1:])), f"{field}: out of order"
        self.field = field
        self.changes = changes  # (first release, value, source link)

    def at(self, release: str) -> T:
        """The value in ``release``."""
        value = self.changes[0][1]
        for first, changed, _ in self.changes:
            if _ORDER[first] <= _ORDER[release]:
                value = changed
        return value


# -- Behaviours ------------------------------------------------------------------------------------

DISPATCH_ANSWERS_ONEWAY = Behaviour(
    "dispatch_answers_oneway",
    (
        ("4.0.0", True, github("4.0.0", _REMOTING, 170, 200)),
        ("5.1.0", False, github("5.1.0", _REMOTING, 196, 215)),  # writeResponse returns on oneway
    ),
)
PC_SYNCHRONIZED_CODE = Behaviour(
    "pc_synchronized_code",
    (
        ("4.0.0", ResponseCode.SYSTEM_ERROR, github("4.0.0", _SEND_PROCESSOR, 381, 383)),
        ("5.3.0", ResponseCode.SYSTEM_BUSY, github("5.3.0", _SEND_PROCESSOR, 432, 435)),  # ISSUE #8053
    ),
)
PAGE_CACHE_BUSY_STATUS = Behaviour(
    "page_cache_busy_status",
    (
        ("4.0.0", "OS_PAGECACHE_BUSY", github("4.0.0", _S + "PutMessageStatus.java", 28)),
        ("5.0.0", "OS_PAGE_CACHE_BUSY", github("5.0.0", _S + "PutMessageStatus.java", 28)),
    ),
)
ADMIN_ANSWERS_UNKNOWN_CODE = Behaviour(
    "admin_answers_unknown_code",
    (
        ("4.0.0", False, github("4.0.0", _ADMIN, 190, 192)),  # default: returns null
        ("4.9.1", True, github("4.9.1", _ADMIN, 238, 240)),  # getUnknownCmdResponse, commit 9a5ec9082f
    ),
)
BEGIN_TIME_RESET_IN_FINALLY = Behaviour(
    "begin_time_reset_in_finally",
    (
        ("4.0.0", False, github("4.0.0", _S + "CommitLog.java", 584, 600)),
        ("4.9.3", True, github("4.9.3", _S + "CommitLog.java", 706, 708)),  # fix c6aeb782e5, ISSUE #3459
        ("5.0.0", False, github("5.0.0", _S + "CommitLog.java", 910, 913)),  # the 5.x rewrite lost it
    ),
)
FAST_FAILURE_SWITCH = Behaviour(
    "fast_failure_switch",
    (
        ("4.0.0", False, github("4.0.0", _FAST_FAILURE, 52, 58)),
        ("4.2.0", True, github("4.2.0", _FAST_FAILURE, 57, 63)),  # isBrokerFastFailureEnable()
    ),
)
PUT_LOCK = Behaviour(
    "put_lock",
    (
        ("4.0.0", PutLockKind.SPIN, github("4.0.0", _STORE_CONFIG, 48)),
        ("4.9.1", PutLockKind.REENTRANT, github("4.9.1", _STORE_CONFIG, 58)),  # commit 5fe0041686
    ),
)
POOL_REQUIRES_ASYNC_FLUSH = Behaviour(
    "pool_requires_async_flush",
    (
        ("4.0.0", True, github("4.0.0", _STORE_CONFIG, 614, 617)),
        ("5.0.0", False, github("5.0.0", _STORE_CONFIG, 883, 885)),  # commit 821b91f0a2
    ),
)
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
SYNC_RETRY_CODES = Behaviour(
    "sync_retry_codes",
    (
        ("4.0.0", _CLASSIC_RETRY_CODES, github("4.0.0", "client/src/main/java/org/apache/rocketmq/client/impl/producer/DefaultMQProducerImpl.java", 495, 510)),
        ("5.3.0", _CLASSIC_RETRY_CODES | {ResponseCode.SYSTEM_BUSY}, github("5.3.0", _PRODUCER, 75, 82)),  # e5b357c3df
        ("5.3.1", _CLASSIC_RETRY_CODES | {ResponseCode.SYSTEM_BUSY, ResponseCode.GO_AWAY}, github("5.3.1", _PRODUCER, 76, 85)),
    ),
)
_SEND_WAIT = (ExecutorName.SEND, 200)  # waitTimeMillsInSendQueue
_PULL_WAIT = (ExecutorName.PULL, 5000)  # waitTimeMillsInPullQueue
_LITE_PULL_WAIT = (ExecutorName.LITE_PULL, 5000)  # waitTimeMillsInLitePullQueue
_HEARTBEAT_WAIT = (ExecutorName.HEARTBEAT, 31000)  # waitTimeMillsInHeartbeatQueue
_TRANSACTION_WAIT = (ExecutorName.END_TRANSACTION, 3000)  # waitTimeMillsInTransactionQueue
_ACK_WAIT = (ExecutorName.ACK, 3000)  # waitTimeMillsInAckQueue
_ADMIN_WAIT = (ExecutorName.ADMIN, 5000)  # waitTimeMillsInAdminBrokerQueue
_CLEANED_5_0 = (_SEND_WAIT, _PULL_WAIT, _LITE_PULL_WAIT, _HEARTBEAT_WAIT, _TRANSACTION_WAIT, _ACK_WAIT)
CLEANED_QUEUES = Behaviour(
    "cleaned_queues",
    (
        ("4.0.0", (_SEND_WAIT,), github("4.0.0", _FAST_FAILURE, 60, 100)),
        ("4.2.0", (_SEND_WAIT, _PULL_WAIT), github("4.2.0", _FAST_FAILURE, 85, 90)),
        ("4.3.0", (_SEND_WAIT, _PULL_WAIT, _HEARTBEAT_WAIT), github("4.3.0", _FAST_FAILURE, 87, 95)),
        ("4.3.1", (_SEND_WAIT, _PULL_WAIT, _HEARTBEAT_WAIT, _TRANSACTION_WAIT), github("4.3.1", _FAST_FAILURE, 87, 98)),
        ("5.0.0", _CLEANED_5_0, github("5.0.0", _FAST_FAILURE, 100, 117)),
        ("5.3.0", (*_CLEANED_5_0, _ADMIN_WAIT), github("5.3.0", _FAST_FAILURE, 60, 66)),  # cleanExpiredRequestQueueList
    ),
)

BEHAVIOURS: tuple[Behaviour[object], ...] = (
    DISPATCH_ANSWERS_ONEWAY,
    PC_SYNCHRONIZED_CODE,
    PAGE_CACHE_BUSY_STATUS,
    ADMIN_ANSWERS_UNKNOWN_CODE,
    BEGIN_TIME_RESET_IN_FINALLY,
    FAST_FAILURE_SWITCH,
    PUT_LOCK,
    POOL_REQUIRES_ASYNC_FLUSH,
    SYNC_RETRY_CODES,
    CLEANED_QUEUES,
)
"""Every behaviour that is one value per release, for the docs' releases × behaviours table."""


# -- Executors -------------------------------------------------------------------------------------


@record
class ExecutorRow:
    """An executor's defaults over a span of releases (``last`` None: to the newest)."""

    name: ExecutorName
    first: str
    last: str | None
    defaults: ExecutorDefaults
    source: str  # the thread-count and queue-capacity defaults at ``first``


def _config(release: str, line: int) -> str:
    return github(release, _BROKER_CONFIG, line)


_UNBOUNDED = None  # Executors.newFixedThreadPool: a LinkedBlockingQueue without a capacity

EXECUTORS: tuple[ExecutorRow, ...] = (
    ExecutorRow(ExecutorName.SEND, "4.0.0", "4.9.0", ExecutorDefaults(ThreadFormula(1, 0), 10_000), _config("4.0.0", 50)),
    ExecutorRow(ExecutorName.SEND, "4.9.1", None, ExecutorDefaults(ThreadFormula(0, 1, 4), 10_000), _config("4.9.1", 62)),
    ExecutorRow(ExecutorName.PULL, "4.0.0", None, ExecutorDefaults(ThreadFormula(16, 2), 100_000), _config("4.0.0", 51)),
    ExecutorRow(ExecutorName.LITE_PULL, "5.0.0", None, ExecutorDefaults(ThreadFormula(16, 2), 100_000), _config("5.0.0", 70)),
    ExecutorRow(ExecutorName.QUERY, "4.2.0", None, ExecutorDefaults(ThreadFormula(8, 1), 20_000), _config("4.2.0", 62)),
    ExecutorRow(ExecutorName.HEARTBEAT, "4.3.0", None, ExecutorDefaults(ThreadFormula(0, 1, 32), 50_000), _config("4.3.0", 66)),
    # max(8 + 2P, 4 × min(P, 4)) from 4.9.1 is 8 + 2P for every P.
    ExecutorRow(ExecutorName.END_TRANSACTION, "4.3.1", None, ExecutorDefaults(ThreadFormula(8, 2), 100_000), _config("4.3.1", 71)),
    ExecutorRow(ExecutorName.ACK, "5.0.0", "5.2.0", ExecutorDefaults(ThreadFormula(3, 0), 100_000), _config("5.0.0", 71)),
    ExecutorRow(ExecutorName.ACK, "5.3.0", None, ExecutorDefaults(ThreadFormula(16, 0), 100_000), _config("5.3.0", 73)),
    ExecutorRow(ExecutorName.CLIENT_MANAGE, "4.0.0", None, ExecutorDefaults(ThreadFormula(32, 0), 1_000_000), _config("4.0.0", 53)),
    ExecutorRow(
        ExecutorName.CONSUMER_MANAGE, "4.0.0", "4.9.8", ExecutorDefaults(ThreadFormula(32, 0), _UNBOUNDED),
        github("4.0.0", _CONTROLLER, 248),
    ),  # fmt: skip
    ExecutorRow(ExecutorName.CONSUMER_MANAGE, "5.0.0", None, ExecutorDefaults(ThreadFormula(32, 0), 1_000_000), _config("5.0.0", 103)),
    ExecutorRow(ExecutorName.REPLY, "4.6.0", None, ExecutorDefaults(ThreadFormula(16, 2), 10_000), _config("4.6.0", 64)),
    ExecutorRow(ExecutorName.LOAD_BALANCE, "5.0.0", None, ExecutorDefaults(ThreadFormula(32, 0), 100_000), _config("5.0.0", 78)),
    ExecutorRow(ExecutorName.ADMIN, "4.0.0", "4.9.8", ExecutorDefaults(ThreadFormula(16, 0), _UNBOUNDED), github("4.0.0", _CONTROLLER, 236)),
    ExecutorRow(ExecutorName.ADMIN, "5.0.0", None, ExecutorDefaults(ThreadFormula(16, 0), 10_000), _config("5.0.0", 106)),
)
"""The executors the spec models, in the order of the spec's state. In 4.x the admin and
consumer-manage executors are ``Executors.newFixedThreadPool`` (an unbounded queue of plain
FutureTasks; neither queue is ever cleaned, so BrokerFastFailure never needs to unwrap them)."""


# -- The processor table ---------------------------------------------------------------------------


@record
class Registration:
    """``remotingServer.registerProcessor(code, processor, executor)`` over a span of releases."""

    code: int
    name: str  # the RequestCode constant
    executor: ExecutorName
    first: str
    last: str | None = None
    line: int = 0  # the call's line in BrokerController.java at ``first``

    @property
    def source(self) -> str:
        return github(self.first, _CONTROLLER, self.line)


REGISTRATIONS: tuple[Registration, ...] = (
    Registration(10, "SEND_MESSAGE", ExecutorName.SEND, "4.0.0", line=375),
    Registration(11, "PULL_MESSAGE", ExecutorName.PULL, "4.0.0", line=384),
    Registration(12, "QUERY_MESSAGE", ExecutorName.PULL, "4.0.0", "4.1.0", line=391),
    Registration(12, "QUERY_MESSAGE", ExecutorName.QUERY, "4.2.0", line=421),
    Registration(14, "QUERY_CONSUMER_OFFSET", ExecutorName.CONSUMER_MANAGE, "4.0.0", line=413),
    Registration(15, "UPDATE_CONSUMER_OFFSET", ExecutorName.CONSUMER_MANAGE, "4.0.0", line=412),
    Registration(33, "VIEW_MESSAGE_BY_ID", ExecutorName.PULL, "4.0.0", "4.1.0", line=392),
    Registration(33, "VIEW_MESSAGE_BY_ID", ExecutorName.QUERY, "4.2.0", line=422),
    Registration(34, "HEART_BEAT", ExecutorName.CLIENT_MANAGE, "4.0.0", "4.2.0", line=401),
    Registration(34, "HEART_BEAT", ExecutorName.HEARTBEAT, "4.3.0", line=516),
    Registration(35, "UNREGISTER_CLIENT", ExecutorName.CLIENT_MANAGE, "4.0.0", line=402),
    Registration(36, "CONSUMER_SEND_MSG_BACK", ExecutorName.SEND, "4.0.0", line=377),
    Registration(37, "END_TRANSACTION", ExecutorName.SEND, "4.0.0", "4.3.0", line=422),
    Registration(37, "END_TRANSACTION", ExecutorName.END_TRANSACTION, "4.3.1", line=548),
    Registration(38, "GET_CONSUMER_LIST_BY_GROUP", ExecutorName.CONSUMER_MANAGE, "4.0.0", line=411),
    Registration(46, "CHECK_CLIENT_CONFIG", ExecutorName.CLIENT_MANAGE, "4.1.0", line=420),
    Registration(310, "SEND_MESSAGE_V2", ExecutorName.SEND, "4.0.0", line=376),
    Registration(320, "SEND_BATCH_MESSAGE", ExecutorName.SEND, "4.1.0", line=392),
    Registration(324, "SEND_REPLY_MESSAGE", ExecutorName.REPLY, "4.6.0", line=574),
    Registration(325, "SEND_REPLY_MESSAGE_V2", ExecutorName.REPLY, "4.6.0", line=575),
    Registration(361, "LITE_PULL_MESSAGE", ExecutorName.LITE_PULL, "5.0.0", line=964),
    Registration(370, "RECALL_MESSAGE", ExecutorName.SEND, "5.3.2", line=1115),
    Registration(400, "QUERY_ASSIGNMENT", ExecutorName.LOAD_BALANCE, "5.0.0", line=1042),
    Registration(401, "SET_MESSAGE_REQUEST_MODE", ExecutorName.LOAD_BALANCE, "5.0.0", line=1044),
    Registration(200050, "POP_MESSAGE", ExecutorName.PULL, "5.0.0", line=973),
    Registration(200051, "ACK_MESSAGE", ExecutorName.ACK, "5.0.0", line=978),
    Registration(200052, "PEEK_MESSAGE", ExecutorName.PULL, "5.0.0", line=969),
    Registration(200053, "CHANGE_MESSAGE_INVISIBLETIME", ExecutorName.ACK, "5.0.0", line=983),
    Registration(200054, "NOTIFICATION", ExecutorName.PULL, "5.0.0", line=988),
    Registration(200055, "POLLING_INFO", ExecutorName.PULL, "5.0.0", line=993),
    Registration(200151, "BATCH_ACK_MESSAGE", ExecutorName.ACK, "5.1.3", line=1039),
)
"""The processor table of every release (BrokerController.registerProcessor, the main server).
A code with no row in a release falls to the default processor, AdminBrokerProcessor, on the
admin executor (``registerDefaultProcessor``)."""


@record
class AdminCase:
    """A ``case RequestCode.X:`` of AdminBrokerProcessor.processRequest's switch over a span of releases."""

    code: int
    name: str
    first: str
    last: str | None = None
    line: int = 0  # the case's line in AdminBrokerProcessor.java at ``first``

    @property
    def source(self) -> str:
        return github(self.first, _ADMIN, self.line)


ADMIN_CASES: tuple[AdminCase, ...] = (
    AdminCase(17, "UPDATE_AND_CREATE_TOPIC", "4.0.0", line=120),
    AdminCase(18, "UPDATE_AND_CREATE_TOPIC_LIST", "5.3.0", line=247),
    AdminCase(21, "GET_ALL_TOPIC_CONFIG", "4.0.0", line=124),
    AdminCase(25, "UPDATE_BROKER_CONFIG", "4.0.0", line=126),
    AdminCase(26, "GET_BROKER_CONFIG", "4.0.0", line=128),
    AdminCase(28, "GET_BROKER_RUNTIME_INFO", "4.0.0", line=138),
    AdminCase(29, "SEARCH_OFFSET_BY_TIMESTAMP", "4.0.0", line=130),
    AdminCase(30, "GET_MAX_OFFSET", "4.0.0", line=132),
    AdminCase(31, "GET_MIN_OFFSET", "4.0.0", line=134),
    AdminCase(32, "GET_EARLIEST_MSG_STORETIME", "4.0.0", line=136),
    AdminCase(41, "LOCK_BATCH_MQ", "4.0.0", line=140),
    AdminCase(42, "UNLOCK_BATCH_MQ", "4.0.0", line=142),
    AdminCase(43, "GET_ALL_CONSUMER_OFFSET", "4.0.0", line=158),
    AdminCase(45, "GET_ALL_DELAY_OFFSET", "4.0.0", line=160),
    AdminCase(50, "UPDATE_AND_CREATE_ACL_CONFIG", "4.5.2", "5.3.2", line=219),
    AdminCase(51, "DELETE_ACL_CONFIG", "4.5.2", "5.3.2", line=221),
    AdminCase(52, "GET_BROKER_CLUSTER_ACL_INFO", "4.5.2", "5.3.2", line=223),
    AdminCase(53, "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG", "4.5.2", "5.3.2", line=225),
    AdminCase(54, "GET_BROKER_CLUSTER_ACL_CONFIG", "4.6.0", "4.9.7", line=232),
    AdminCase(54, "GET_BROKER_CLUSTER_ACL_CONFIG", "5.0.0", "5.1.4", line=301),
    AdminCase(60, "GET_TIMER_CHECK_POINT", "5.0.0", line=207),
    AdminCase(61, "GET_TIMER_METRICS", "5.0.0", line=209),
    AdminCase(200, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", "4.0.0", line=144),
    AdminCase(201, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", "4.0.0", line=146),
    AdminCase(202, "GET_TOPIC_STATS_INFO", "4.0.0", line=150),
    AdminCase(203, "GET_CONSUMER_CONNECTION_LIST", "4.0.0", line=152),
    AdminCase(204, "GET_PRODUCER_CONNECTION_LIST", "4.0.0", line=154),
    AdminCase(207, "DELETE_SUBSCRIPTIONGROUP", "4.0.0", line=148),
    AdminCase(208, "GET_CONSUME_STATS", "4.0.0", line=156),
    AdminCase(215, "DELETE_TOPIC_IN_BROKER", "4.0.0", line=122),
    AdminCase(222, "INVOKE_BROKER_TO_RESET_OFFSET", "4.0.0", line=162),
    AdminCase(223, "INVOKE_BROKER_TO_GET_CONSUMER_STATUS", "4.0.0", line=164),
    AdminCase(225, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST", "5.3.1", line=292),
    AdminCase(300, "QUERY_TOPIC_CONSUME_BY_WHO", "4.0.0", line=166),
    AdminCase(301, "REGISTER_FILTER_SERVER", "4.0.0", "4.9.5", line=168),
    AdminCase(301, "REGISTER_FILTER_SERVER", "5.0.0", "5.1.0", line=261),
    AdminCase(303, "QUERY_CONSUME_TIME_SPAN", "4.0.0", line=170),
    AdminCase(305, "GET_SYSTEM_TOPIC_LIST_FROM_BROKER", "4.0.0", line=172),
    AdminCase(306, "CLEAN_EXPIRED_CONSUMEQUEUE", "4.0.0", line=174),
    AdminCase(307, "GET_CONSUMER_RUNNING_INFO", "4.0.0", line=178),
    AdminCase(308, "QUERY_CORRECTION_OFFSET", "4.0.0", line=180),
    AdminCase(309, "CONSUME_MESSAGE_DIRECTLY", "4.0.0", line=182),
    AdminCase(314, "CLONE_GROUP_OFFSET", "4.0.0", line=184),
    AdminCase(315, "VIEW_BROKER_STATS_DATA", "4.0.0", line=186),
    AdminCase(316, "CLEAN_UNUSED_TOPIC", "4.0.0", line=176),
    AdminCase(317, "GET_BROKER_CONSUME_STATS", "4.0.0", line=188),
    AdminCase(321, "QUERY_CONSUME_QUEUE", "4.1.0", line=200),
    AdminCase(323, "RESUME_CHECK_HALF_MESSAGE", "4.5.2", line=227),
    AdminCase(328, "GET_ALL_PRODUCER_INFO", "4.9.4", line=193),
    AdminCase(329, "DELETE_EXPIRED_COMMITLOG", "4.9.4", line=215),
    AdminCase(343, "QUERY_TOPICS_BY_CONSUMER", "5.0.0", line=257),
    AdminCase(345, "QUERY_SUBSCRIPTION_BY_CONSUMER", "5.0.0", line=259),
    AdminCase(351, "GET_TOPIC_CONFIG", "5.0.0", line=303),
    AdminCase(352, "GET_SUBSCRIPTIONGROUP_CONFIG", "5.0.0", line=289),
    AdminCase(353, "UPDATE_AND_GET_GROUP_FORBIDDEN", "5.0.0", line=287),
    AdminCase(354, "CHECK_ROCKSDB_CQ_WRITE_PROGRESS", "5.3.1", line=348),
    AdminCase(355, "EXPORT_ROCKSDB_CONFIG_TO_JSON", "5.3.2", line=364),
    AdminCase(402, "GET_ALL_MESSAGE_REQUEST_MODE", "5.0.0", line=249),
    AdminCase(513, "UPDATE_AND_CREATE_STATIC_TOPIC", "5.0.0", line=305),
    AdminCase(905, "NOTIFY_MIN_BROKER_ID_CHANGE", "5.0.0", line=307),
    AdminCase(906, "EXCHANGE_BROKER_HA_INFO", "5.0.0", line=309),
    AdminCase(907, "GET_BROKER_HA_STATUS", "5.0.0", line=311),
    AdminCase(908, "RESET_MASTER_FLUSH_OFFSET", "5.0.0", line=313),
    AdminCase(1007, "GET_BROKER_EPOCH_CACHE", "5.0.0", line=315),
    AdminCase(1008, "NOTIFY_BROKER_ROLE_CHANGED", "5.0.0", line=317),
    AdminCase(2001, "UPDATE_COLD_DATA_FLOW_CTR_CONFIG", "5.1.2", line=220),
    AdminCase(2002, "REMOVE_COLD_DATA_FLOW_CTR_CONFIG", "5.1.2", line=222),
    AdminCase(2003, "GET_COLD_DATA_FLOW_CTR_INFO", "5.1.2", line=224),
    AdminCase(2004, "SET_COMMITLOG_READ_MODE", "5.1.2", line=226),
    AdminCase(3001, "AUTH_CREATE_USER", "5.3.0", line=369),
    AdminCase(3002, "AUTH_UPDATE_USER", "5.3.0", line=371),
    AdminCase(3003, "AUTH_DELETE_USER", "5.3.0", line=373),
    AdminCase(3004, "AUTH_GET_USER", "5.3.0", line=375),
    AdminCase(3005, "AUTH_LIST_USER", "5.3.0", line=377),
    AdminCase(3006, "AUTH_CREATE_ACL", "5.3.0", line=379),
    AdminCase(3007, "AUTH_UPDATE_ACL", "5.3.0", line=381),
    AdminCase(3008, "AUTH_DELETE_ACL", "5.3.0", line=383),
    AdminCase(3009, "AUTH_GET_ACL", "5.3.0", line=385),
    AdminCase(3010, "AUTH_LIST_ACL", "5.3.0", line=387),
    AdminCase(200056, "POP_ROLLBACK", "5.3.2", line=416),
)
"""The codes AdminBrokerProcessor answers itself; any other code reaching it takes its
``default:`` branch (:data:`ADMIN_ANSWERS_UNKNOWN_CODE`)."""


# -- Profiles --------------------------------------------------------------------------------------


def _executors(release: str) -> tuple[tuple[ExecutorName, ExecutorDefaults], ...]:
    return tuple((row.name, row.defaults) for row in EXECUTORS if _covers(row.first, row.last, release))


def _build(release: str) -> Profile:
    return Profile(
        version=release,
        executor_of_code=tuple(
            (r.code, r.executor) for r in REGISTRATIONS if _covers(r.first, r.last, release)
        ),
        admin_codes=frozenset(c.code for c in ADMIN_CASES if _covers(c.first, c.last, release)),
        executors=_executors(release),
        cleaned_queues=CLEANED_QUEUES.at(release),
        dispatch_answers_oneway=DISPATCH_ANSWERS_ONEWAY.at(release),
        pc_synchronized_code=PC_SYNCHRONIZED_CODE.at(release),
        page_cache_busy_status=PAGE_CACHE_BUSY_STATUS.at(release),
        admin_answers_unknown_code=ADMIN_ANSWERS_UNKNOWN_CODE.at(release),
        begin_time_reset_in_finally=BEGIN_TIME_RESET_IN_FINALLY.at(release),
        fast_failure_switch=FAST_FAILURE_SWITCH.at(release),
        put_lock=PUT_LOCK.at(release),
        pool_requires_async_flush=POOL_REQUIRES_ASYNC_FLUSH.at(release),
        sync_retry_codes=SYNC_RETRY_CODES.at(release),
    )


ALL_PROFILES: dict[str, Profile] = {release: _build(release) for release in RELEASES}
"""The profile of every release."""

PROFILES: dict[str, Profile] = {release: ALL_PROFILES[release] for release in EXPLORED}
"""The explored releases' profiles: the small models', the lockstep suites' and the mutants' defaults."""


def profile(version: str) -> Profile:
    """The profile of any release; a clear error names the known ones."""
    try:
        return ALL_PROFILES[version]
    except KeyError:
        raise _unknown(version) from None
