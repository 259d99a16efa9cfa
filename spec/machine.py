"""The state machine: which actions are enabled, and what each does.

``enabled(config, s, a)`` evaluates only the action's guard; ``step(config, s, a)`` applies its
effect (and refuses an action that is not enabled). Every action maps to one guard and one
effect in its actor's module; the map is the single ``match`` below, exhaustive by
``assert_never``.

``actions(config, s, env)`` lists the enabled actions, Stateright-style, given an
:class:`Environment`: the bounded set of things the outside world may do (which requests
producers send, how far the clock may move, which faults may happen). The spec's threads are
fully enumerated from the state; only the environment's choices need bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, assert_never

from spec import commitservice, environment, fastfailure, remoting, workers
from spec.actions import (
    Action,
    ClockAdvances,
    CommitServiceCommits,
    CommitServiceReturnsBuffer,
    DispatchAnswersNotSupported,
    DispatchCreatesTask,
    DispatchQueuesTask,
    DispatchRejectsOverload,
    DispatchRejectsRequest,
    DispatchStartsWorker,
    FastFailureCleansExpiredHead,
    FastFailureDrainsBusySendQueue,
    FastFailureDropsForeignElement,
    FastFailureEndsBusyDrain,
    FastFailureSkipsRun,
    FastFailureStartsRun,
    FastFailureStopsAtHead,
    HaServiceAcquiresPutLock,
    HaServiceReleasesPutLock,
    InternalTaskSubmitted,
    OperatorSetsFastFailureEnable,
    OperatorSetsQueueWait,
    RateLimitHandlerAdmits,
    RateLimitHandlerFailsOpen,
    RateLimitHandlerThrottles,
    RequestArrives,
    WorkerAcquiresPutLock,
    WorkerAppendsAndUnlocks,
    WorkerCreatesMappedFile,
    WorkerDiscardsCancelledTask,
    WorkerFindsPageCacheBusy,
    WorkerPassesPutCheck,
    WorkerProcessesRequest,
    WorkerRunsForeignTask,
    WorkerTakesTask,
    WorkerThrowsInsideLock,
)
from spec.codes import RequestCode
from spec.config import BrokerConfig
from spec.frozen import record
from spec.profiles import ExecutorName
from spec.state import BrokerState, FastFailurePhase

Guard = Callable[[BrokerConfig, BrokerState, Any], bool]
Effect = Callable[[BrokerConfig, BrokerState, Any], BrokerState]


class ActionNotEnabled(ValueError):
    """``step`` was asked to take an action whose guard is false."""


def rule(a: Action) -> tuple[Guard, Effect]:
    """The guard and the effect of an action."""
    match a:
        case RequestArrives():
            return remoting.request_arrives_enabled, remoting.request_arrives
        case RateLimitHandlerAdmits():
            return remoting.rate_limit_handler_admits_enabled, remoting.rate_limit_handler_admits
        case RateLimitHandlerThrottles():
            return remoting.rate_limit_handler_throttles_enabled, remoting.rate_limit_handler_throttles
        case RateLimitHandlerFailsOpen():
            return remoting.rate_limit_handler_fails_open_enabled, remoting.rate_limit_handler_fails_open
        case DispatchAnswersNotSupported():
            return remoting.dispatch_answers_not_supported_enabled, remoting.dispatch_answers_not_supported
        case DispatchRejectsRequest():
            return remoting.dispatch_rejects_request_enabled, remoting.dispatch_rejects_request
        case DispatchCreatesTask():
            return remoting.dispatch_creates_task_enabled, remoting.dispatch_creates_task
        case DispatchStartsWorker():
            return remoting.dispatch_starts_worker_enabled, remoting.dispatch_starts_worker
        case DispatchQueuesTask():
            return remoting.dispatch_queues_task_enabled, remoting.dispatch_queues_task
        case DispatchRejectsOverload():
            return remoting.dispatch_rejects_overload_enabled, remoting.dispatch_rejects_overload
        case WorkerTakesTask():
            return workers.worker_takes_task_enabled, workers.worker_takes_task
        case WorkerDiscardsCancelledTask():
            return workers.worker_discards_cancelled_task_enabled, workers.worker_discards_cancelled_task
        case WorkerRunsForeignTask():
            return workers.worker_runs_foreign_task_enabled, workers.worker_runs_foreign_task
        case WorkerProcessesRequest():
            return workers.worker_processes_request_enabled, workers.worker_processes_request
        case WorkerFindsPageCacheBusy():
            return workers.worker_finds_page_cache_busy_enabled, workers.worker_finds_page_cache_busy
        case WorkerPassesPutCheck():
            return workers.worker_passes_put_check_enabled, workers.worker_passes_put_check
        case WorkerAcquiresPutLock():
            return workers.worker_acquires_put_lock_enabled, workers.worker_acquires_put_lock
        case WorkerCreatesMappedFile():
            return workers.worker_creates_mapped_file_enabled, workers.worker_creates_mapped_file
        case WorkerAppendsAndUnlocks():
            return workers.worker_appends_and_unlocks_enabled, workers.worker_appends_and_unlocks
        case WorkerThrowsInsideLock():
            return workers.worker_throws_inside_lock_enabled, workers.worker_throws_inside_lock
        case CommitServiceCommits():
            return commitservice.commit_service_commits_enabled, commitservice.commit_service_commits
        case CommitServiceReturnsBuffer():
            return commitservice.commit_service_returns_buffer_enabled, commitservice.commit_service_returns_buffer
        case FastFailureStartsRun():
            return fastfailure.fast_failure_starts_run_enabled, fastfailure.fast_failure_starts_run
        case FastFailureSkipsRun():
            return fastfailure.fast_failure_skips_run_enabled, fastfailure.fast_failure_skips_run
        case FastFailureDrainsBusySendQueue():
            return (
                fastfailure.fast_failure_drains_busy_send_queue_enabled,
                fastfailure.fast_failure_drains_busy_send_queue,
            )
        case FastFailureDropsForeignElement():
            return (
                fastfailure.fast_failure_drops_foreign_element_enabled,
                fastfailure.fast_failure_drops_foreign_element,
            )
        case FastFailureEndsBusyDrain():
            return fastfailure.fast_failure_ends_busy_drain_enabled, fastfailure.fast_failure_ends_busy_drain
        case FastFailureCleansExpiredHead():
            return (
                fastfailure.fast_failure_cleans_expired_head_enabled,
                fastfailure.fast_failure_cleans_expired_head,
            )
        case FastFailureStopsAtHead():
            return fastfailure.fast_failure_stops_at_head_enabled, fastfailure.fast_failure_stops_at_head
        case ClockAdvances():
            return environment.clock_advances_enabled, environment.clock_advances
        case OperatorSetsFastFailureEnable():
            return (
                environment.operator_sets_fast_failure_enable_enabled,
                environment.operator_sets_fast_failure_enable,
            )
        case OperatorSetsQueueWait():
            return environment.operator_sets_queue_wait_enabled, environment.operator_sets_queue_wait
        case InternalTaskSubmitted():
            return environment.internal_task_submitted_enabled, environment.internal_task_submitted
        case HaServiceAcquiresPutLock():
            return environment.ha_service_acquires_put_lock_enabled, environment.ha_service_acquires_put_lock
        case HaServiceReleasesPutLock():
            return environment.ha_service_releases_put_lock_enabled, environment.ha_service_releases_put_lock
        case _:
            assert_never(a)


_RULES: dict[type, tuple[Guard, Effect]] = {}


def _rule_of(a: Action) -> tuple[Guard, Effect]:
    """:func:`rule`, remembered per action class (the rule depends on the class only)."""
    found = _RULES.get(type(a))
    if found is None:
        found = _RULES[type(a)] = rule(a)
    return found


def enabled(config: BrokerConfig, s: BrokerState, a: Action) -> bool:
    """Whether ``a``'s guard holds in ``s``."""
    guard, _ = _rule_of(a)
    return guard(config, s, a)


def step(config: BrokerConfig, s: BrokerState, a: Action) -> BrokerState:
    """The state after ``a``; raises :class:`ActionNotEnabled` if its guard is false."""
    guard, effect = _rule_of(a)
    if not guard(config, s, a):
        raise ActionNotEnabled(f"{a!r} is not enabled")
    return effect(config, s, a)


# -- The environment's choices ----------------------------------------------------------------------


@record
class RequestTemplate:
    """A kind of request the environment may send."""

    code: RequestCode
    topic: str = "TopicTest"
    oneway: bool = False


@record
class Environment:
    """What the outside world may do, bounded so that the reachable states are finite."""

    requests: tuple[RequestTemplate, ...]  # the kinds of request producers may send
    max_requests: int  # how many requests arrive in all
    clock_steps: tuple[int, ...]  # the amounts (ms) the clock may advance by in one step
    max_elapsed_ms: int  # the clock never passes start + this
    max_exceptions_in_lock: int = 0  # WorkerThrowsInsideLock faults allowed
    ha_appends: bool = False  # whether the HA service takes the put lock
    foreign_tasks: tuple[ExecutorName, ...] = ()  # executors that may get a non-RequestTask element
    max_foreign_tasks: int = 0  # how many such elements in all
    limiter_overflows: bool = False  # whether the limiter's own pool may reject (fail open)
    fast_failure_toggles: tuple[bool, ...] = ()  # values an operator may set brokerFastFailureEnable to
    queue_wait_changes: tuple[tuple[ExecutorName, int], ...] = ()  # (queue, wait) an operator may set
    punctual_fast_failure: bool = False  # the clock waits for a due fast-failure run to start

    # ``punctual_fast_failure`` is an assumption about the environment, not the broker: the
    # scheduler thread is never starved, so a due run starts before time moves on. Without it
    # the fixed-rate catch-up (several due runs back to back, corner 27) is explored too, at
    # the cost of many more states.


def candidate_actions(config: BrokerConfig, s: BrokerState, env: Environment) -> Iterator[Action]:
    """Every action the threads and the environment could take in ``s`` (enabled or not)."""
    for io in range(len(s.io_threads)):
        if s.next_request_id <= env.max_requests:
            for t in env.requests:
                yield RequestArrives(io, t.code, t.topic, t.oneway)
        yield RateLimitHandlerAdmits(io)
        yield RateLimitHandlerThrottles(io)
        if env.limiter_overflows:
            yield RateLimitHandlerFailsOpen(io)
        yield DispatchAnswersNotSupported(io)
        yield DispatchRejectsRequest(io)
        yield DispatchCreatesTask(io)
        yield DispatchStartsWorker(io)
        yield DispatchQueuesTask(io)
        yield DispatchRejectsOverload(io)
    for executor in s.executors:
        for w in range(len(executor.workers)):
            yield WorkerTakesTask(executor.name, w)
            yield WorkerDiscardsCancelledTask(executor.name, w)
            yield WorkerRunsForeignTask(executor.name, w)
            yield WorkerProcessesRequest(executor.name, w)
            yield WorkerFindsPageCacheBusy(executor.name, w)
            yield WorkerPassesPutCheck(executor.name, w)
            yield WorkerAcquiresPutLock(executor.name, w)
            yield WorkerCreatesMappedFile(executor.name, w)
            yield WorkerAppendsAndUnlocks(executor.name, w)
            if s.exceptions_in_lock < env.max_exceptions_in_lock:
                yield WorkerThrowsInsideLock(executor.name, w)
    yield CommitServiceCommits()
    yield CommitServiceReturnsBuffer()
    yield FastFailureStartsRun()
    yield FastFailureSkipsRun()
    yield FastFailureDrainsBusySendQueue()
    yield FastFailureDropsForeignElement()
    yield FastFailureEndsBusyDrain()
    for queue, _ in s.queue_waits:
        yield FastFailureCleansExpiredHead(queue)
        yield FastFailureStopsAtHead(queue)
    run_due = s.fast_failure_phase is FastFailurePhase.IDLE and s.now >= s.fast_failure_next_run
    if not (env.punctual_fast_failure and run_due):
        for ms in env.clock_steps:
            if s.now + ms <= config.start_time_ms + env.max_elapsed_ms:
                yield ClockAdvances(ms)
    for value in env.fast_failure_toggles:
        yield OperatorSetsFastFailureEnable(value)
    for queue, wait in env.queue_wait_changes:
        yield OperatorSetsQueueWait(queue, wait)
    if s.next_foreign_id <= env.max_foreign_tasks:
        for name in env.foreign_tasks:
            yield InternalTaskSubmitted(name)
    if env.ha_appends:
        yield HaServiceAcquiresPutLock()
        yield HaServiceReleasesPutLock()


def actions(config: BrokerConfig, s: BrokerState, env: Environment) -> list[Action]:
    """The actions enabled in ``s`` under ``env``."""
    return [a for a in candidate_actions(config, s, env) if enabled(config, s, a)]


def successors(config: BrokerConfig, s: BrokerState, env: Environment) -> Iterator[tuple[Action, BrokerState]]:
    """Each enabled action with the state it leads to (the guard is evaluated once)."""
    for a in candidate_actions(config, s, env):
        guard, effect = _rule_of(a)
        if guard(config, s, a):
            yield a, effect(config, s, a)
