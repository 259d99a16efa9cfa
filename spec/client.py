"""The producer: whether a send that got a broker error code is tried again.

``MQClientAPIImpl.processSendResponse`` turns every code other than SUCCESS and the three
flush/slave codes into an ``MQBrokerException``; ``DefaultMQProducerImpl.sendDefaultImpl``
then retries a SYNC send (up to ``1 + retryTimesWhenSendFailed`` attempts, normally on another
broker) only if the code is in the retry set. ASYNC sends never retry on a broker code, and
ONEWAY sends get no response to act on.

Consequence (corner 38): before 5.3.0 every SYSTEM_BUSY answer (``[REJECTREQUEST]``,
``[OVERLOAD]``, ``[PCBUSY_CLEAN_QUEUE]``, ``[TIMEOUT_CLEAN_QUEUE]``) fails the send at once,
while ``[PC_SYNCHRONIZED]``, a SYSTEM_ERROR until 5.2.0, is retried.

Source: CL/impl/MQClientAPIImpl.java processSendResponse (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/client/src/main/java/org/apache/rocketmq/client/impl/MQClientAPIImpl.java#L623-L687), sendMessageAsync;
CL/impl/producer/DefaultMQProducerImpl.java sendDefaultImpl (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/client/src/main/java/org/apache/rocketmq/client/impl/producer/DefaultMQProducerImpl.java#L537-L670); DefaultMQProducer.retryResponseCodes (https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.8/client/src/main/java/org/apache/rocketmq/client/producer/DefaultMQProducer.java#L61-L1112)
(4.9.2+).
Simplification: the ``sendMsgTimeout`` (3000 ms) budget across attempts and the latency-fault
isolation (``sendLatencyFaultEnable``, off by default) are left out.
"""

from __future__ import annotations

import enum

from spec.codes import ResponseCode
from spec.profiles import Profile

#: DefaultMQProducer.retryTimesWhenSendFailed default.
RETRY_TIMES_WHEN_SEND_FAILED = 2

#: Codes processSendResponse maps to a SendStatus instead of an exception.
_NOT_AN_ERROR = frozenset({ResponseCode.SUCCESS})


class SendMode(enum.Enum):
    """CommunicationMode of a send."""

    SYNC = "SYNC"
    ASYNC = "ASYNC"
    ONEWAY = "ONEWAY"


def attempts(mode: SendMode, retry_times_when_send_failed: int = RETRY_TIMES_WHEN_SEND_FAILED) -> int:
    """``timesTotal``: 1 + retries for SYNC, 1 for ASYNC and ONEWAY."""
    return 1 + retry_times_when_send_failed if mode is SendMode.SYNC else 1


def retries_on_broker_code(profile: Profile, mode: SendMode, code: ResponseCode) -> bool:
    """Whether a send that got ``code`` from the broker is attempted again (attempts permitting)."""
    if code in _NOT_AN_ERROR or mode is not SendMode.SYNC:
        return False
    return code in profile.sync_retry_codes
