"""Model configurations for exhaustive exploration (the analogue of TLC's .cfg files).

Small on purpose: a few requests, one or two send workers, a queue of one or two, a pool of
two, and a coarse clock in which every duration is scaled down together (busy timeout 2 ticks,
send-queue wait 2, fast failure first at tick 1 and then every tick). The spec is the same;
only the numbers are smaller, so that every interleaving can be visited. Together the models
reach every sometimes-property; each alone is a few seconds. Their state counts are pinned in
tests/test_explore.py, so a change to the spec that changes the reachable states is noticed.

Each model uses one remoting thread except ``two-io-threads``: two of them multiply the states
by their interleavings, and that model exists to show what they add (queue order that does not
follow createTimestamp, corner 21).
"""

from __future__ import annotations

from typing import Any

from spec.codes import RequestCode
from spec.config import BrokerConfig, RateLimitConfig, broker_config
from spec.frozen import record
from spec.machine import Environment, RequestTemplate
from spec.profiles import ExecutorName, Profile


@record
class Model:
    """A named pair of broker configuration and environment."""

    name: str
    description: str
    config: BrokerConfig
    env: Environment


_SEND = RequestTemplate(RequestCode.SEND_MESSAGE)


def _broker(profile: Profile, *, threads: int, capacity: int, **overrides: Any) -> BrokerConfig:
    """The send executor alone, with time scaled down: busy after 2 ticks, queue wait 2 ticks."""
    settings: dict[str, Any] = dict(
        io_threads=1,
        os_page_cache_busy_timeout_ms=2,
        fast_failure_initial_delay_ms=1,
        fast_failure_period_ms=1,
        mapped_file_size=1,
    )
    settings.update(overrides)
    return broker_config(
        profile,
        executors=(ExecutorName.SEND,),
        threads={ExecutorName.SEND: threads},
        capacities={ExecutorName.SEND: capacity},
        queue_waits={ExecutorName.SEND: 2},
        **settings,
    )


def _arrivals(requests: int, elapsed: int, **choices: Any) -> Environment:
    return Environment(
        requests=(_SEND,),
        max_requests=requests,
        clock_steps=(1,),
        max_elapsed_ms=elapsed,
        punctual_fast_failure=True,
        **choices,
    )


def stuck_lock(profile: Profile) -> Model:
    """An exception inside the put lock: is the broker left busy with no writer?"""
    return Model(
        "stuck-lock",
        "2 sends, 1 worker, queue 1, 4 ticks, one exception inside the put lock",
        _broker(profile, threads=1, capacity=1),
        _arrivals(2, 4, exceptions_in_lock=True),
    )


def overload(profile: Profile) -> Model:
    """More sends than a worker and its queue hold: OVERLOAD, TIMEOUT, PCBUSY, REJECTREQUEST."""
    return Model(
        "overload",
        "3 sends, 1 worker, queue 1, 3 ticks",
        _broker(profile, threads=1, capacity=1),
        _arrivals(3, 3),
    )


def slow_put(profile: Profile) -> Model:
    """One worker holds the put lock for ticks while a second reaches the put pre-check."""
    return Model(
        "slow-put",
        "2 sends, 2 workers, queue 1, 4 ticks",
        _broker(profile, threads=2, capacity=1),
        _arrivals(2, 4),
    )


def pool(profile: Profile) -> Model:
    """Two workers borrow from a pool of two: the pool runs dry and sends are refused."""
    return Model(
        "pool",
        "3 sends, 2 workers, queue 2, pool of 2 one-message files, 1 tick",
        _broker(profile, threads=2, capacity=2, transient_store_pool_enable=True, transient_store_pool_size=2),
        _arrivals(3, 1),
    )


def two_io_threads(profile: Profile) -> Model:
    """Two remoting threads dispatch concurrently: timestamps can be out of queue order."""
    return Model(
        "two-io-threads",
        "3 sends from 2 remoting threads, 1 worker, queue 2, 1 tick",
        _broker(profile, threads=1, capacity=2, io_threads=2),
        _arrivals(3, 1),
    )


def limiter(profile: Profile) -> Model:
    """Source 004's per-topic limiter at 1000 QPS with a 2 ms breaker, and a pool that may fail open."""
    return Model(
        "limiter",
        "2 sends to one topic, limiter 1000 QPS / breaker 2 ms, limiter pool may overflow, 3 ticks",
        _broker(
            profile,
            threads=1,
            capacity=1,
            rate_limit=RateLimitConfig(enabled=True, default_qps=1000.0, circuit_breaker_open_micros=2000),
        ),
        _arrivals(2, 3, limiter_overflows=True),
    )


MODELS = {
    "stuck-lock": stuck_lock,
    "overload": overload,
    "slow-put": slow_put,
    "pool": pool,
    "two-io-threads": two_io_threads,
    "limiter": limiter,
}
