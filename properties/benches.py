"""Test benches: the small broker configurations and environments the lockstep machines run in.

A bench focuses the same rules on one component by what it lets happen: the pool bench lends a
pool of one or two buffers to one-message files, the limiter bench turns the limiter on with a
rate of one permit per millisecond, and so on. The whole-broker bench draws one of several
configurations so that every action of the spec can fire somewhere.

Time is scaled down together, as in :mod:`properties.models`: the busy timeout is 2 ms, the fast-failure
schedule starts after 1 ms and runs every 1 ms, the send queue's wait is 2 ms. Only the numbers
change; the broker's rules are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from spec.codes import RequestCode
from spec.config import BrokerConfig, FlushDiskType, RateLimitConfig, broker_config
from spec.machine import Environment, RequestTemplate
from spec.profiles import ExecutorName, Profile

#: Every duration scaled down together (Java: 1000 ms busy timeout, 1000 ms initial delay, 10 ms period).
SCALED_TIME: dict[str, Any] = dict(
    os_page_cache_busy_timeout_ms=2,
    fast_failure_initial_delay_ms=1,
    fast_failure_period_ms=1,
)

#: Scaled waitTimeMillsIn*Queue (Java: 200, 5000, 5000, 31000, 3000, 3000, 5000).
SCALED_WAITS: dict[ExecutorName, int] = {
    ExecutorName.SEND: 2,
    ExecutorName.PULL: 4,
    ExecutorName.LITE_PULL: 4,
    ExecutorName.HEARTBEAT: 6,
    ExecutorName.END_TRANSACTION: 3,
    ExecutorName.ACK: 3,
    ExecutorName.ADMIN: 4,
}

#: A limiter of one permit per millisecond (half that for CONSUMER_SEND_MSG_BACK), open for 2 ms.
SMALL_LIMITER = RateLimitConfig(enabled=True, default_qps=1000.0, send_msg_back_qps=500.0, circuit_breaker_open_micros=2000)

RETRY_TOPIC = "%RETRY%group"  # the retry topic of consumer group "group", where CONSUMER_SEND_MSG_BACK writes


def small_broker(
    profile: Profile,
    executors: tuple[ExecutorName, ...],
    *,
    send_threads: int = 2,
    capacity: int = 2,
    **overrides: Any,
) -> BrokerConfig:
    """A broker with only ``executors``: the send executor has ``send_threads``, every other one
    thread; every queue the profile bounds holds ``capacity`` (unbounded queues stay unbounded)."""
    chosen = [name for name, _ in profile.executors if name in executors]
    settings: dict[str, Any] = dict(io_threads=2, **SCALED_TIME)
    settings.update(overrides)
    return broker_config(
        profile,
        executors=executors,
        threads={name: send_threads if name is ExecutorName.SEND else 1 for name in chosen},
        capacities={name: capacity for name, shape in profile.executors if shape.capacity is not None},
        queue_waits=SCALED_WAITS,
        **settings,
    )


@dataclass(frozen=True)
class Bench:
    """A named family of configurations (one is drawn per run) and the environment around them."""

    name: str
    description: str
    configs: Callable[[Profile], tuple[BrokerConfig, ...]]
    env: Environment


def _send(topic: str = "TopicA", oneway: bool = False) -> RequestTemplate:
    return RequestTemplate(RequestCode.SEND_MESSAGE, topic, oneway)


_MSG_BACK = RequestTemplate(RequestCode.CONSUMER_SEND_MSG_BACK, RETRY_TOPIC)
# Bounds on the environment. Without them Hypothesis, which favours the first rules and repeats
# spans of earlier runs, can spend a whole run advancing the clock; with them the clock and the
# arrivals run out and the broker's threads get the remaining steps.
_ARRIVALS = 12
_ELAPSED_MS = 16

_WHOLE_EXECUTORS = (
    ExecutorName.SEND,
    ExecutorName.PULL,
    ExecutorName.HEARTBEAT,
    ExecutorName.END_TRANSACTION,
    ExecutorName.ADMIN,
)


def _whole_configs(p: Profile) -> tuple[BrokerConfig, ...]:
    return (
        small_broker(p, _WHOLE_EXECUTORS, send_threads=1, transient_store_pool_enable=True, transient_store_pool_size=2, mapped_file_size=2),
        small_broker(p, _WHOLE_EXECUTORS, send_threads=1, rate_limit=SMALL_LIMITER),
        small_broker(
            p,
            _WHOLE_EXECUTORS,
            send_threads=1,
            default_processor_registered=False,
            transient_store_pool_enable=True,
            transient_store_pool_size=1,
            mapped_file_size=1,
        ),
    )


WHOLE = Bench(
    name="whole",
    description="send/pull/heartbeat/endTransaction/admin executors; pool, limiter or no default processor",
    configs=_whole_configs,
    env=Environment(
        requests=(
            _send(),
            RequestTemplate(RequestCode.SEND_MESSAGE_V2, "TopicB", oneway=True),
            _MSG_BACK,
            RequestTemplate(RequestCode.PULL_MESSAGE, "TopicA"),
            RequestTemplate(RequestCode.HEART_BEAT, ""),
            RequestTemplate(RequestCode.END_TRANSACTION, "TopicA"),
            RequestTemplate(RequestCode.GET_BROKER_RUNTIME_INFO, ""),
            RequestTemplate(RequestCode.UNKNOWN, "", oneway=True),
        ),
        max_requests=_ARRIVALS,
        clock_steps=(1, 3),
        max_elapsed_ms=_ELAPSED_MS,
        exceptions_in_lock=True,
        foreign_tasks=(ExecutorName.SEND, ExecutorName.PULL),
        max_foreign_tasks=2,
        limiter_overflows=True,
        # Operator changes and the HA service's lock are left to the fast-failure and lock benches:
        # their always-enabled rules (and the skipped runs of a switched-off scheduler) would take
        # the steps the broker's threads need here.
    ),
)

DISPATCH = Bench(
    name="dispatch",
    description="every executor of the profile with one thread and a queue of one; three IO threads; the switch",
    configs=lambda p: tuple(
        small_broker(p, tuple(n for n, _ in p.executors), send_threads=1, capacity=1, io_threads=3, default_processor_registered=d)
        for d in (True, False)
    ),
    env=Environment(
        requests=(
            _send(),
            _send(oneway=True),
            RequestTemplate(RequestCode.SEND_BATCH_MESSAGE, "TopicB"),
            RequestTemplate(RequestCode.PULL_MESSAGE, "TopicA"),
            RequestTemplate(RequestCode.LITE_PULL_MESSAGE, "TopicA"),
            RequestTemplate(RequestCode.QUERY_MESSAGE, "TopicA"),
            RequestTemplate(RequestCode.HEART_BEAT, "", oneway=True),
            RequestTemplate(RequestCode.END_TRANSACTION, "TopicA"),
            RequestTemplate(RequestCode.ACK_MESSAGE, "TopicA"),
            RequestTemplate(RequestCode.RECALL_MESSAGE, "TopicA"),
            RequestTemplate(RequestCode.UNKNOWN, ""),
            RequestTemplate(RequestCode.UNKNOWN, "", oneway=True),
        ),
        max_requests=_ARRIVALS,
        clock_steps=(1, 2),
        max_elapsed_ms=_ELAPSED_MS,
        # brokerFastFailureEnable switched off at most once per run; the scans of this bench's seven
        # queues then give their steps to dispatch.
        fast_failure_toggles=(False,),
    ),
)

LOCK = Bench(
    name="lock",
    description="send executor only; the HA service and two exceptions inside the put lock",
    configs=lambda p: (small_broker(p, (ExecutorName.SEND,)),),
    env=Environment(
        requests=(_send(), _send(oneway=True), _MSG_BACK),
        max_requests=_ARRIVALS,
        clock_steps=(1, 3),
        max_elapsed_ms=_ELAPSED_MS,
        exceptions_in_lock=True,
        ha_appends=True,
    ),
)

POOL = Bench(
    name="pool",
    description="send executor only; a pool of one or two buffers for files of one or two messages",
    configs=lambda p: tuple(
        small_broker(
            p,
            (ExecutorName.SEND,),
            transient_store_pool_enable=True,
            transient_store_pool_size=size,
            mapped_file_size=file_size,
            flush_disk_type=flush,
        )
        for size, file_size, flush in (
            (1, 1, FlushDiskType.ASYNC_FLUSH),
            (2, 1, FlushDiskType.ASYNC_FLUSH),
            (2, 2, FlushDiskType.ASYNC_FLUSH),
            (1, 2, FlushDiskType.SYNC_FLUSH),
        )
    ),
    env=Environment(
        requests=(_send(), _MSG_BACK),
        max_requests=_ARRIVALS,
        clock_steps=(1, 2),
        max_elapsed_ms=_ELAPSED_MS,
    ),
)

FAST_FAILURE = Bench(
    name="fastfailure",
    description="send, pull and heartbeat queues of three; foreign elements, wait changes, one stuck lock",
    configs=lambda p: (
        small_broker(p, (ExecutorName.SEND, ExecutorName.PULL, ExecutorName.HEARTBEAT), send_threads=1, capacity=3),
    ),
    env=Environment(
        requests=(
            _send(),
            _send(oneway=True),
            RequestTemplate(RequestCode.PULL_MESSAGE, "TopicA"),
            RequestTemplate(RequestCode.HEART_BEAT, ""),
        ),
        max_requests=_ARRIVALS,
        clock_steps=(1, 3),
        max_elapsed_ms=_ELAPSED_MS,
        exceptions_in_lock=True,
        foreign_tasks=(ExecutorName.SEND, ExecutorName.PULL),
        max_foreign_tasks=3,
        # Each wait change can happen once per run: waits that keep changing would be always-enabled
        # rules taking the steps the queues need. The switch is the dispatch bench's: once off, every
        # run of this bench's subject would be skipped.
        queue_wait_changes=((ExecutorName.SEND, 0), (ExecutorName.PULL, 0)),
    ),
)

LIMITER = Bench(
    name="limiter",
    description="send executor only; the per-topic limiter on, three topics, the limiter's pool may fail open",
    configs=lambda p: (small_broker(p, (ExecutorName.SEND,), io_threads=3, rate_limit=SMALL_LIMITER),),
    env=Environment(
        requests=(_send(), _send("TopicB"), _send(oneway=True), _MSG_BACK),
        max_requests=_ARRIVALS,
        clock_steps=(1, 3),
        max_elapsed_ms=_ELAPSED_MS,
        limiter_overflows=True,
    ),
)

BENCHES: dict[str, Bench] = {b.name: b for b in (WHOLE, DISPATCH, LOCK, POOL, FAST_FAILURE, LIMITER)}
