"""Model configurations for exhaustive exploration (the analogue of TLC's .cfg files).

Small on purpose: a few requests, two send workers, a queue of two, a pool of two, a coarse
clock in which every duration is scaled down together (busy timeout, queue wait, the fast
failure schedule). The spec is the same; only the numbers are smaller, so that every
interleaving can be visited. The state counts of these models are pinned in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spec.codes import RequestCode
from spec.config import BrokerConfig, broker_config
from spec.machine import Environment, RequestTemplate
from spec.profiles import ExecutorName, Profile


@dataclass(frozen=True)
class Model:
    """A named pair of broker configuration and environment."""

    name: str
    description: str
    config: BrokerConfig
    env: Environment


def _small_broker(profile: Profile, **overrides: Any) -> BrokerConfig:
    """Send executor only: two threads, a queue of two; a pool of two one-message files; time /100."""
    settings: dict[str, Any] = dict(
        io_threads=2,
        os_page_cache_busy_timeout_ms=2,
        fast_failure_initial_delay_ms=1,
        fast_failure_period_ms=1,
        transient_store_pool_enable=True,
        transient_store_pool_size=2,
        mapped_file_size=1,
    )
    settings.update(overrides)
    return broker_config(
        profile,
        executors=(ExecutorName.SEND,),
        threads={ExecutorName.SEND: 2},
        capacities={ExecutorName.SEND: 2},
        queue_waits={ExecutorName.SEND: 2},
        **settings,
    )


def stuck_lock(profile: Profile) -> Model:
    """Two sends and one exception inside the put lock: can the broker be left busy with no writer?"""
    return Model(
        name="stuck-lock",
        description="2 sends, 2 send workers, queue 2, pool 2, busy after 2 ticks, 1 exception in the lock",
        config=_small_broker(profile, io_threads=1),
        env=Environment(
            requests=(RequestTemplate(RequestCode.SEND_MESSAGE),),
            max_requests=2,
            clock_steps=(1,),
            max_elapsed_ms=5,
            max_exceptions_in_lock=1,
        ),
    )


def overload(profile: Profile) -> Model:
    """Four sends through one queue of two with a wait of two ticks: overload, timeouts, busy."""
    return Model(
        name="overload",
        description="4 sends from 2 IO threads, 2 send workers, queue 2, pool 2, clock to 4 ticks",
        config=_small_broker(profile),
        env=Environment(
            requests=(RequestTemplate(RequestCode.SEND_MESSAGE),),
            max_requests=4,
            clock_steps=(1,),
            max_elapsed_ms=4,
        ),
    )


MODELS = {"stuck-lock": stuck_lock, "overload": overload}
