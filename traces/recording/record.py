"""Recording traces: a recorder any implementation can call, and workloads that drive the spec.

:class:`TraceRecorder` is the writing side of the format: an implementation calls
``record(action, responses, now)`` after each step it takes (the reference broker takes a
``recorder`` with that method), and the recorder streams the events to JSON Lines or Parquet.

Until a workload is run against the reference implementation, :func:`simulate` drives the
spec itself: a seeded random walk over :func:`spec.machine.actions`, weighted per workload so
that each one reaches the overload it is named after. Such traces conform by construction;
they exercise the format, the rules and the replay, and planted faults in them give the
examples that break each rule.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from spec.actors import Action
from spec.commitservice import CommitServiceReturnsBuffer
from spec.environment import (
    ClockAdvances,
    HaServiceAcquiresPutLock,
    InternalTaskSubmitted,
    OperatorSetsFastFailureEnable,
    OperatorSetsQueueWait,
)
from spec.remoting import DispatchCreatesTask, RateLimitHandlerFailsOpen, RequestArrives
from spec.workers import WorkerAppendsAndUnlocks, WorkerTakesTask, WorkerThrowsInsideLock
from spec.codes import RequestCode
from spec.config import BrokerConfig, RateLimitConfig, broker_config
from spec.machine import ActionNotEnabled, Environment, RequestTemplate, candidate_actions, enabled, step
from spec.profiles import ExecutorName
from spec.releases import profile
from spec.state import BrokerState, Response, initial_state
from traces.format.records import Observation, RecordedResponse, TraceHeader, declared_environment, event_record, header_record
from traces.format.write import TraceWriter

DRAIN_FACTOR = 3


class TraceRecorder:
    """Turns an implementation's steps into trace records, written as they come (bounded memory)."""

    def __init__(self, writer: TraceWriter, header: TraceHeader) -> None:
        self.writer = writer
        self.header = header
        self.seq = 0
        self.arrivals = 0
        writer.write(header_record(header))

    def record(self, action: Action, responses: Sequence[Response], now: int, request_id: int | None = None) -> None:
        """One step: the action taken, the responses it wrote, the broker clock after it.

        ``request_id`` is the opaque of a RequestArrives; when the implementation does not pass
        it, opaques are taken to be numbered 1, 2, … in arrival order (as the reference does).
        """
        self.seq += 1
        if isinstance(action, RequestArrives):
            self.arrivals += 1
            request_id = self.arrivals if request_id is None else request_id
        written = [RecordedResponse(r.request_id, int(r.code), r.remark) for r in responses]
        self.writer.write(event_record(self.header.trace_id, self.seq, now, action, written, request_id))


# -- Workloads --------------------------------------------------------------------------------



@dataclass(frozen=True)
class Workload:
    """A kind of load: a configuration, an environment and how likely each enabled action is."""

    name: str
    description: str
    config: Callable[[str], BrokerConfig]
    env: Environment
    weights: dict[type, float] = field(default_factory=dict)  # action class -> weight (default 1)
    phase: Callable[[int], float] | None = None  # arrival weight multiplier by step (bursts)
    topic_weights: dict[str, float] = field(default_factory=dict)  # arrival weight multiplier by topic
    max_exceptions_in_lock: int = 0  # how many WorkerThrowsInsideLock faults a walk injects at most

    def weight(self, step: int, a: Action) -> float:
        """Relative probability of ``a`` at ``step``."""
        w = self.weights.get(type(a), 1.0)
        if isinstance(a, RequestArrives):
            if self.phase is not None:
                w *= self.phase(step)
            w *= self.topic_weights.get(a.topic, 1.0)
        return w


#: Java's schedule and busy timeout scaled down so that a short run reaches them.
_SCALED: dict[str, Any] = dict(io_threads=2, os_page_cache_busy_timeout_ms=20, fast_failure_initial_delay_ms=10, start_time_ms=1)


def _broker(version: str, **overrides: Any) -> BrokerConfig:
    """Send and admin executors, on the scaled schedule (:data:`_SCALED`)."""
    settings = dict(_SCALED)
    capacity = overrides.pop("send_capacity", 16)
    threads = overrides.pop("send_threads", 2)
    settings.update(overrides)
    return broker_config(
        profile(version),
        executors=(ExecutorName.SEND, ExecutorName.ADMIN),
        threads={ExecutorName.SEND: threads, ExecutorName.ADMIN: 1},
        capacities={ExecutorName.SEND: capacity, ExecutorName.ADMIN: 16},
        queue_waits={ExecutorName.SEND: 50, ExecutorName.ADMIN: 500},
        **settings,
    )


def _every_executor(version: str) -> BrokerConfig:
    """Every executor the release has, small, with the same scaled schedule as :func:`_broker`."""
    p = profile(version)
    names = [name for name, _ in p.executors]
    return broker_config(
        p,
        **_SCALED,
        threads={n: 2 if n is ExecutorName.SEND else 1 for n in names},
        capacities={n: 16 for n in names},
        queue_waits={n: 50 for n in names},
    )


#: Codes a real broker sees besides sends, routed as the release registers them: a pull, a
#: heartbeat, a transaction end, a query, consumer offsets (consumerManage), an admin command the
#: admin processor answers, one it does not know, and codes no release names at all.
_EVERY_CODE = (
    RequestTemplate(RequestCode.SEND_MESSAGE),
    RequestTemplate(RequestCode.PULL_MESSAGE),
    RequestTemplate(RequestCode.HEART_BEAT, topic=""),
    RequestTemplate(RequestCode.END_TRANSACTION),
    RequestTemplate(RequestCode.QUERY_MESSAGE),
    RequestTemplate(15, topic=""),  # UPDATE_CONSUMER_OFFSET
    RequestTemplate(17, topic=""),  # UPDATE_AND_CREATE_TOPIC, an admin case in every release
    RequestTemplate(RequestCode.UNKNOWN, topic=""),
    RequestTemplate(-7, topic=""),
    RequestTemplate(2**31 - 1, topic=""),
)

_SENDS = (
    RequestTemplate(RequestCode.SEND_MESSAGE),
    RequestTemplate(RequestCode.SEND_MESSAGE_V2),
    RequestTemplate(RequestCode.GET_BROKER_RUNTIME_INFO, topic=""),
    RequestTemplate(RequestCode.UNKNOWN, topic=""),
)
_UNBOUNDED = 1 << 62


def _env(requests: tuple[RequestTemplate, ...] = _SENDS, **kw: object) -> Environment:
    base = Environment(
        requests=requests,
        max_requests=_UNBOUNDED,
        clock_steps=(1, 5),
        max_elapsed_ms=_UNBOUNDED,
        punctual_fast_failure=True,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


#: Source 004: one consumer that never acknowledges sends every message back to its retry topic,
#: next to the ordinary producers of two other topics.
_RETRY_TOPIC = "%RETRY%get-pugc-to-ai-consumer"
_STORM = (
    RequestTemplate(RequestCode.CONSUMER_SEND_MSG_BACK, topic=_RETRY_TOPIC),
    RequestTemplate(RequestCode.SEND_MESSAGE, topic="TopicOrders"),
    RequestTemplate(RequestCode.SEND_MESSAGE, topic="TopicPayments"),
)
_STORM_MIX = {_RETRY_TOPIC: 8.0}
#: Send-backs limited at the article's 100 QPS; ordinary topics at a rate they stay under in this
#: short, time-compressed run (the article's default is 2000 QPS); a 20 ms breaker (the article's
#: is 1 s), compressed like the broker's waits.
_STORM_LIMITS = RateLimitConfig(enabled=True, default_qps=20000.0, send_msg_back_qps=100.0, circuit_breaker_open_micros=20_000)

_LIMITED = RateLimitConfig(enabled=True, default_qps=200.0, send_msg_back_qps=50.0, circuit_breaker_open_micros=50_000)

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("steady", "sends at a rate the broker keeps up with", lambda v: _broker(v), _env()),
        Workload(
            "bursts",
            "quiet periods and bursts of arrivals",
            lambda v: _broker(v),
            _env(),
            weights={RequestArrives: 4.0},
            phase=lambda i: 1.0 if (i // 400) % 2 == 0 else 0.02,
        ),
        Workload(
            "slow-disk",
            "the put lock is held long: the broker turns busy ([PC_SYNCHRONIZED], [PCBUSY_CLEAN_QUEUE], [REJECTREQUEST])",
            lambda v: _broker(v),
            _env(clock_steps=(1, 5, 25)),
            weights={WorkerAppendsAndUnlocks: 0.05, ClockAdvances: 3.0},
        ),
        Workload(
            "pool-exhaustion",
            "the commit service returns buffers slowly: the TransientStorePool runs dry ([REJECTREQUEST])",
            lambda v: _broker(v, transient_store_pool_enable=True, transient_store_pool_size=2, mapped_file_size=2),
            _env(),
            weights={CommitServiceReturnsBuffer: 0.02},
        ),
        Workload(
            "full-send-queue",
            "workers are slow and the send queue small: [OVERLOAD] and [TIMEOUT_CLEAN_QUEUE]",
            lambda v: _broker(v, send_capacity=4),
            _env(),
            weights={WorkerTakesTask: 0.1, RequestArrives: 3.0, DispatchCreatesTask: 3.0},
        ),
        Workload(
            "retry-storm",
            "source 004 before its fix: one consumer's send-backs flood the send queue and every topic times out",
            lambda v: _broker(v, send_capacity=64),
            _env(requests=_STORM, clock_steps=(1,)),
            weights={RequestArrives: 6.0, ClockAdvances: 1.0, WorkerTakesTask: 0.3},
            topic_weights=_STORM_MIX,
        ),
        Workload(
            "retry-storm-limited",
            "the same storm with source 004's per-topic limiter on: the retry topic is throttled, the others served",
            lambda v: _broker(v, send_capacity=64, rate_limit=_STORM_LIMITS),
            _env(requests=_STORM, clock_steps=(1,)),
            weights={RequestArrives: 6.0, ClockAdvances: 1.0, WorkerTakesTask: 0.3},
            topic_weights=_STORM_MIX,
        ),
        Workload(
            "faults",
            "exceptions inside the put lock, HA appends, foreign tasks, operator toggles, limiter overflow",
            lambda v: _broker(v, rate_limit=_LIMITED),
            _env(
                exceptions_in_lock=True,
                ha_appends=True,
                foreign_tasks=(ExecutorName.SEND,),
                max_foreign_tasks=4,
                limiter_overflows=True,
                fast_failure_toggles=(False, True),
                queue_wait_changes=((ExecutorName.SEND, 30), (ExecutorName.SEND, 50)),
            ),
            weights={
                WorkerThrowsInsideLock: 0.5,
                HaServiceAcquiresPutLock: 0.05,
                InternalTaskSubmitted: 0.1,
                RateLimitHandlerFailsOpen: 0.2,
                OperatorSetsFastFailureEnable: 0.02,
                OperatorSetsQueueWait: 0.02,
            },
            max_exceptions_in_lock=2,
        ),
        Workload(
            "every-code",
            "requests of every kind a real broker serves, on every executor the release has, routed by its processor table",
            _every_executor,
            _env(requests=_EVERY_CODE),
        ),
        Workload(
            "many-topics",
            "sends spread over twenty topics with the limiter on",
            lambda v: _broker(v, rate_limit=_LIMITED),
            _env(requests=tuple(RequestTemplate(RequestCode.SEND_MESSAGE, topic=f"Topic{i}") for i in range(20))),
        ),
    )
}


Take = Callable[[BrokerState, Action], BrokerState | None]
"""Performs a chosen action on the implementation; the spec state after what it actually did (None: stop)."""


def walk(workload: Workload, config: BrokerConfig, events: int, seed: int, take: Take) -> None:
    """A seeded random walk over the spec's enabled actions, weighted by ``workload``.

    Requests arrive during the first ``events`` steps; then arrivals stop and the walk goes on
    until every request is settled and the put lock is free (at most ``DRAIN_FACTOR`` × events
    steps in all), so that a trace ends quiet and "answered exactly once" can be judged at its end.
    """
    rng = random.Random(seed)
    s: BrokerState | None = initial_state(config)
    i = faults = 0
    while s is not None and (
        i < events or (i < events * DRAIN_FACTOR and (s.requests_inside() or s.lock.holder is not None))
    ):
        choices: list[Action] = []
        weights: list[float] = []
        for a in candidate_actions(config, s, workload.env):
            w = 0.0 if i >= events and isinstance(a, RequestArrives) else workload.weight(i, a)
            if isinstance(a, WorkerThrowsInsideLock) and faults >= workload.max_exceptions_in_lock:
                w = 0.0
            if w > 0 and enabled(config, s, a):
                choices.append(a)
                weights.append(w)
        if not choices:
            return
        (action,) = rng.choices(choices, weights)
        s = take(s, action)
        i += 1
        faults += isinstance(action, WorkerThrowsInsideLock)


def _spec_take(config: BrokerConfig, recorder: TraceRecorder) -> Take:
    """The spec itself as the implementation."""

    def take(s: BrokerState, action: Action) -> BrokerState:
        after, out = step(config, s, action)
        opaque = s.next_request_id if isinstance(action, RequestArrives) else None
        recorder.record(action, out.responses, after.now, opaque)
        return after

    return take


def _reference_take(config: BrokerConfig, recorder: TraceRecorder) -> Take:
    """The reference broker (reference/broker.py) as the implementation; it reports to ``recorder``.

    The spec only proposes what may happen next; the reference performs it (a thread's action
    steps that thread) and the spec follows what the reference actually did. If that is not
    enabled in the spec the walk stops: the trace ends at the divergence, for ``check`` to explain.
    """
    from reference.broker import Broker
    from reference.lockstep import perform

    broker = Broker(config, recorder=recorder)

    def take(s: BrokerState, action: Action) -> BrokerState | None:
        done = perform(broker, action)
        if done is None:
            return None
        try:
            return step(config, s, done)[0]
        except ActionNotEnabled:
            return None

    return take


IMPLEMENTATIONS: dict[str, Callable[[BrokerConfig, TraceRecorder], Take]] = {
    "reference": _reference_take,
    "spec": _spec_take,
}


def record_workload(
    out: str | Path,
    workload: str,
    version: str,
    events: int,
    traces: int = 1,
    seed: int = 0,
    row_group: int = 100_000,
    implementation: str = "reference",
) -> int:
    """Write ``traces`` traces of about ``events`` events each of a workload to ``out`` (a path or a URI); the rows written."""
    w = WORKLOADS[workload]
    with TraceWriter(out, row_group=row_group) as writer:
        for t in range(traces):
            config = w.config(version)
            header = TraceHeader(
                trace_id=f"{workload}-{version}-{seed + t}",
                implementation=f"flowspec-{implementation}",
                implementation_version="0.1.0",
                profile=version,
                observation=Observation.FULL,
                config=config,
                environment=declared_environment(w.env),  # what the walk lets the outside world do unseen below full
            )
            recorder = TraceRecorder(writer, header)
            walk(w, config, events, seed + t, IMPLEMENTATIONS[implementation](config, recorder))
        return writer.rows_written
