"""Random walks that run the spec and the reference broker in lockstep.

Each step either feeds both an input or fault the spec's environment allows, or picks one of
the reference's threads at random and steps it: whatever the thread did must be the one action
the spec allows that thread (or nothing, when the spec allows it nothing). After every step the
reference's observed state must equal the spec's state, and a thread that did nothing must have
changed nothing. ``lockstep_walk(..., broker_class=...)`` runs the same walk on a mutant.

Throughput: ``PYTHONPATH=. .venv/bin/python tests/test_reference_lockstep.py`` (the spec's guards
dominate the cost; the reference alone steps tens of thousands of actions per second).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

import pytest

from reference.broker import Broker
from reference.lockstep import perform, step_thread
from spec.actors import ThreadId, WorkerId, all_threads, thread_of
from spec.environment import (
    ClockAdvances,
    HaServiceAcquiresPutLock,
    HaServiceReleasesPutLock,
    OperatorSetsFastFailureEnable,
    OperatorSetsQueueWait,
)
from spec.remoting import RequestArrives
from spec.codes import RequestCode
from spec.config import BrokerConfig, FlushDiskType, RateLimitConfig, broker_config
from spec.machine import Environment, RequestTemplate, candidate_actions, enabled, step
from spec.profiles import ExecutorName, Profile
from spec.releases import PROFILES
from spec.state import initial_state
from properties.steptable import describe_action

SEND, PULL, ADMIN = ExecutorName.SEND, ExecutorName.PULL, ExecutorName.ADMIN


def small_broker(profile: Profile, **overrides: Any) -> BrokerConfig:
    """Send, pull and admin executors (unless ``executors`` says others) with tiny pools and queues;
    every duration scaled down."""
    settings: dict[str, Any] = dict(
        executors=(SEND, PULL, ADMIN),
        threads={SEND: 2, PULL: 1, ADMIN: 1},
        capacities={SEND: 2, PULL: 1, ADMIN: 1},
        queue_waits={SEND: 2, PULL: 3, ADMIN: 2},
        io_threads=2,
        os_page_cache_busy_timeout_ms=2,
        fast_failure_initial_delay_ms=1,
        fast_failure_period_ms=1,
        transient_store_pool_enable=True,
        transient_store_pool_size=2,
        mapped_file_size=2,
        rate_limit=RateLimitConfig(enabled=True, default_qps=100.0, send_msg_back_qps=50.0, circuit_breaker_open_micros=5000),
    )
    settings.update(overrides)
    return broker_config(profile, **settings)


BUSY_ENVIRONMENT = Environment(
    requests=(
        RequestTemplate(RequestCode.SEND_MESSAGE, "TopicA"),
        RequestTemplate(RequestCode.SEND_MESSAGE_V2, "TopicB", oneway=True),
        RequestTemplate(RequestCode.CONSUMER_SEND_MSG_BACK, "%RETRY%group"),
        RequestTemplate(RequestCode.PULL_MESSAGE, "TopicA"),
        RequestTemplate(RequestCode.GET_BROKER_RUNTIME_INFO, ""),
        RequestTemplate(RequestCode.UNKNOWN, "", oneway=True),
        RequestTemplate(RequestCode.UNKNOWN, ""),
    ),
    max_requests=40,
    clock_steps=(1, 2),
    max_elapsed_ms=120,
    exceptions_in_lock=True,
    ha_appends=True,
    foreign_tasks=(SEND, PULL),
    max_foreign_tasks=2,
    limiter_overflows=True,
    fast_failure_toggles=(True, False),
    queue_wait_changes=((SEND, 0), (SEND, 2), (PULL, 1)),
)


# Inputs are drawn by these weights (per enabled action; 1 otherwise) so that requests and time
# dominate and the always-enabled operator changes do not.
INPUT_WEIGHTS: dict[type, float] = {
    RequestArrives: 1.0,
    ClockAdvances: 6.0,
    HaServiceAcquiresPutLock: 0.3,
    HaServiceReleasesPutLock: 4.0,
    OperatorSetsFastFailureEnable: 0.3,
    OperatorSetsQueueWait: 0.2,
}


@dataclass(frozen=True)
class Scenario:
    name: str
    config: BrokerConfig
    env: Environment
    worker_weight: float = 1.0  # how often a worker is picked, against 1 for every other thread


def scenarios() -> list[Scenario]:
    """Per profile: the busy broker, also with slow workers (queues fill and expire); no default
    processor and no limiter; no pool (sync flush)."""
    out = []
    for version, profile in sorted(PROFILES.items()):
        out.append(Scenario(f"{version}-busy", small_broker(profile), BUSY_ENVIRONMENT))
        out.append(Scenario(f"{version}-slow-workers", small_broker(profile), BUSY_ENVIRONMENT, worker_weight=0.15))
        out.append(
            Scenario(
                f"{version}-bare",
                small_broker(profile, default_processor_registered=False, rate_limit=RateLimitConfig(), mapped_file_size=1),
                BUSY_ENVIRONMENT,
            )
        )
        out.append(
            Scenario(
                f"{version}-sync-flush",
                small_broker(profile, flush_disk_type=FlushDiskType.SYNC_FLUSH, transient_store_pool_size=1),
                BUSY_ENVIRONMENT,
            )
        )
    return out


def lockstep_walk(scenario: Scenario, steps: int, seed: int, broker_class: type[Broker] = Broker) -> int:
    """Run one random walk; return how many actions were taken. Fails on the first divergence."""
    rng = random.Random(seed)
    config, env = scenario.config, scenario.env
    s = initial_state(config)
    broker = broker_class(config)
    threads = all_threads(config)
    thread_weights = [scenario.worker_weight if isinstance(t, WorkerId) else 1.0 for t in threads]
    assert broker.observe() == s, "initial states differ"
    history: list[str] = []
    taken = 0
    for _ in range(steps):
        # Only the guards of the chosen kind of step are evaluated: the spec's guards dominate the cost.
        candidates = list(candidate_actions(config, s, env))
        inputs = [a for a in candidates if thread_of(a) is None and enabled(config, s, a)] if rng.random() < 0.35 else []
        if inputs:
            action = rng.choices(inputs, weights=[INPUT_WEIGHTS.get(type(a), 1.0) for a in inputs])[0]
            done = perform(broker, action)
        else:
            thread: ThreadId = rng.choices(threads, weights=thread_weights)[0]
            allowed = [a for a in candidates if thread_of(a) == thread and enabled(config, s, a)]
            done = step_thread(broker, thread)
            assert len(allowed) <= 1, f"the spec lets {thread} take several steps: {allowed}"
            expected = allowed[0] if allowed else None
            assert done == expected, (
                f"{scenario.name} seed {seed}: {thread} did {done!r}, spec allows {expected!r}\n" + "\n".join(history[-15:])
            )
            if done is None:
                assert broker.observe() == s, f"{scenario.name} seed {seed}: {thread} changed state without a step"
                continue
            action = done
        history.append(describe_action(action))
        s, out = step(config, s, action)
        taken += 1
        observed = broker.observe()
        assert observed == s, _divergence(scenario, seed, history, s, observed)
        assert broker.outputs == out, f"{scenario.name} seed {seed}: outputs {broker.outputs}, spec {out}"
    return taken


def _divergence(scenario: Scenario, seed: int, history: list[str], expected: object, actual: object) -> str:
    from spec.state import BrokerState
    from properties.steptable import changed_fields

    assert isinstance(expected, BrokerState) and isinstance(actual, BrokerState)
    fields = "\n".join(f"  {name}: spec {b} / reference {a}" for name, b, a in changed_fields(expected, actual))
    return f"{scenario.name} seed {seed}: states differ after\n" + "\n".join(history[-15:]) + "\n" + fields


@pytest.mark.parametrize("scenario", scenarios(), ids=lambda sc: sc.name)
def test_reference_refines_the_spec_on_random_walks(scenario: Scenario) -> None:
    taken = sum(lockstep_walk(scenario, steps=300, seed=seed) for seed in range(3))
    assert taken > 300, f"the walks barely moved ({taken} actions): the scenario is too constrained"


def main() -> None:
    """Measure lockstep steps per second: ``PYTHONPATH=. python tests/test_reference_lockstep.py``."""
    started = time.perf_counter()
    taken = 0
    for scenario in scenarios():
        for seed in range(10):
            taken += lockstep_walk(scenario, steps=300, seed=seed)
    elapsed = time.perf_counter() - started
    print(f"{taken} lockstep actions in {elapsed:.2f} s: {taken / elapsed:.0f} actions/s")


if __name__ == "__main__":
    main()
