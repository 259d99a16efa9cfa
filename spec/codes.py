"""The wire vocabulary: request codes, response codes and the exact remark strings.

These are the values a producer sees. Remarks are quoted verbatim from the Java source; a
leading space or a missing one is part of the contract (the rust port's ``[REJECT REQUEST]``,
with a space, is a divergence precisely because of this).

Sources (at rocketmq-all-5.3.3; the same text in every release unless a field of
:mod:`spec.releases` says otherwise):
  RemotingSysResponseCode (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingSysResponseCode.java#L20-L31),
  RequestCode (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RequestCode.java#L20-L30),
  NettyRemotingAbstract.processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317),
  BrokerFastFailure.cleanExpiredRequest / cleanExpiredRequestInQueue
  (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L93-L155),
  SendMessageProcessor.handlePutMessageResult (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java#L367-L545).
"""

from __future__ import annotations

import enum
import re


class RequestCode(enum.IntEnum):
    """The request codes the spec distinguishes (RequestCode.java; values identical in 4.x and 5.x)."""

    SEND_MESSAGE = 10
    PULL_MESSAGE = 11
    QUERY_MESSAGE = 12
    GET_BROKER_RUNTIME_INFO = 28  # an admin request: served by the default processor's executor
    HEART_BEAT = 34
    CONSUMER_SEND_MSG_BACK = 36
    END_TRANSACTION = 37
    SEND_MESSAGE_V2 = 310
    SEND_BATCH_MESSAGE = 320
    LITE_PULL_MESSAGE = 361
    RECALL_MESSAGE = 370  # 5.3.2+ only
    ACK_MESSAGE = 200051  # 5.0.0+ only
    UNKNOWN = 99999  # no processor is registered for it in any version


#: Codes whose processor writes to the commit log in the worker (the "put path").
PUT_CODES: frozenset[int] = frozenset(
    {
        RequestCode.SEND_MESSAGE,
        RequestCode.SEND_MESSAGE_V2,
        RequestCode.SEND_BATCH_MESSAGE,
        RequestCode.CONSUMER_SEND_MSG_BACK,
    }
)


class ResponseCode(enum.IntEnum):
    """Response codes (RemotingSysResponseCode 0–4, ResponseCode for the rest)."""

    SUCCESS = 0
    SYSTEM_ERROR = 1
    SYSTEM_BUSY = 2
    REQUEST_CODE_NOT_SUPPORTED = 3
    TOPIC_NOT_EXIST = 17
    SERVICE_NOT_AVAILABLE = 14
    NO_PERMISSION = 16
    NO_BUYER_ID = 204
    NOT_IN_CURRENT_UNIT = 205
    GO_AWAY = 1500


class ResponseKind(enum.Enum):
    """Why the broker answered: one value per place in the code that writes a response."""

    NOT_SUPPORTED = "NOT_SUPPORTED"  # dispatch, or the admin processor's default branch
    REJECT_REQUEST = "REJECTREQUEST"  # dispatch: processor.rejectRequest() was true
    OVERLOAD = "OVERLOAD"  # dispatch: executor.submit threw RejectedExecutionException
    PC_SYNCHRONIZED = "PC_SYNCHRONIZED"  # worker: store busy at the put pre-check
    PCBUSY_CLEAN_QUEUE = "PCBUSY_CLEAN_QUEUE"  # fast failure phase 1
    TIMEOUT_CLEAN_QUEUE = "TIMEOUT_CLEAN_QUEUE"  # fast failure phase 2
    RATE_LIMIT = "RateLimit"  # per-topic limiter extension (source 004)
    EXCEPTION = "EXCEPTION"  # worker: a Throwable escaped processRequest
    SUCCESS = "SUCCESS"  # worker: the put path appended the message (PUT_OK)
    PROCESSOR = "PROCESSOR"  # worker: a processor off the put path answered with its own result


# -- Remarks, verbatim ---------------------------------------------------------------------

REJECT_REQUEST_REMARK = "[REJECTREQUEST]system busy, start flow control for a while"
OVERLOAD_REMARK = "[OVERLOAD]system busy, start flow control for a while"
PC_SYNCHRONIZED_REMARK = "[PC_SYNCHRONIZED]broker busy, start flow control for a while"
_PCBUSY_FORMAT = (
    "[PCBUSY_CLEAN_QUEUE]broker busy, start flow control for a while, "
    "period in queue: {period}ms, size of queue: {size}"
)
_TIMEOUT_FORMAT = (
    "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, "
    "period in queue: {period}ms, size of queue: {size}"
)


def not_supported_remark(code: int) -> str:
    """``" request type " + code + " not supported"``: note the leading space."""
    return f" request type {code} not supported"


def pcbusy_remark(period_ms: int, queue_size: int) -> str:
    """The phase-1 remark; ``period`` uses %s on a long, ``size`` %d (same text for ints)."""
    return _PCBUSY_FORMAT.format(period=period_ms, size=queue_size)


def timeout_remark(period_ms: int, queue_size: int) -> str:
    """The phase-2 remark, same shape as :func:`pcbusy_remark`."""
    return _TIMEOUT_FORMAT.format(period=period_ms, size=queue_size)


def rate_limit_remark(resource: str, need_wait_micros: int) -> str:
    """Source 004's RateLimitHandler: ``"[RateLimit] for " + resource + " need wait:" + w + "microsecs"``."""
    return f"[RateLimit] for {resource} need wait:{need_wait_micros}microsecs"


#: The tags that open the fast-failure cleaners' remarks: phase 1's (page cache busy), then phase 2's (queue wait).
CLEAN_QUEUE_TAGS = ("[PCBUSY_CLEAN_QUEUE]", "[TIMEOUT_CLEAN_QUEUE]")
#: The tags that open the flow-control answers' remarks. Only the code paths the spec models write them.
FLOW_CONTROL_TAGS = ("[REJECTREQUEST]", "[OVERLOAD]", "[PC_SYNCHRONIZED]", *CLEAN_QUEUE_TAGS, "[RateLimit]")


def is_flow_control_remark(remark: str | None) -> bool:
    """Whether the remark is one of the flow-control answers' (it opens with one of their tags)."""
    return remark is not None and remark.startswith(FLOW_CONTROL_TAGS)


#: The two cleaning remarks, for parsers of recorded responses (a trace checker matches them in SQL too).
CLEAN_QUEUE_PATTERN = re.compile(
    r"\[(PCBUSY_CLEAN_QUEUE|TIMEOUT_CLEAN_QUEUE)\]broker busy, start flow control for a while, "
    r"period in queue: (-?\d+)ms, size of queue: (\d+)"
)
RATE_LIMIT_PATTERN = re.compile(r"\[RateLimit\] for (.+) need wait:(\d+)microsecs")


def parse_clean_queue_remark(remark: str) -> tuple[str, int, int] | None:
    """Return (tag, period_ms, queue_size) of a PCBUSY/TIMEOUT remark, or None if it is not one."""
    m = CLEAN_QUEUE_PATTERN.fullmatch(remark)
    if m is None:
        return None
    return m.group(1), int(m.group(2)), int(m.group(3))


def parse_rate_limit_remark(remark: str) -> tuple[str, int] | None:
    """Return (resource, need_wait_micros) of a RateLimit remark, or None if it is not one."""
    m = RATE_LIMIT_PATTERN.fullmatch(remark)
    if m is None:
        return None
    return m.group(1), int(m.group(2))
