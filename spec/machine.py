"""The state machine: which actions are enabled, and what each does.

``enabled(config, s, a)`` evaluates only the action's guard; ``step(config, s, a)`` applies its
effect and returns the next state with the step's :class:`~spec.state.Outputs` (it refuses an
action that is not enabled). Each action is declared in its actor's module, right above its
guard (``<name>_enabled``) and its effect (``<name>``, the action's name in snake case):
:mod:`spec.remoting`, :mod:`spec.workers`, :mod:`spec.commitservice`, :mod:`spec.fastfailure`,
:mod:`spec.environment`. The table of rules below is read from those modules, so an action is
written in one place and never listed again.

``actions(config, s, env)`` lists the enabled actions, Stateright-style, given an
:class:`Environment`: the bounded set of things the outside world may do (which requests
producers send, how far the clock may move, which faults may happen). The spec's threads are
fully enumerated from the state; only the environment's choices need bounds.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, TypeVar

from spec import commitservice, environment, fastfailure, remoting, workers
from spec.codes import RequestCode
from spec.config import BrokerConfig
from spec.frozen import record
from spec.profiles import ExecutorName
from spec.state import BrokerState, FastFailurePhase, Next, Outputs
from spec.actors import Action, CommitServiceStep, FastFailureStep, IoThreadStep, WorkerStep

A = TypeVar("A", bound=Action)
Guard = Callable[[BrokerConfig, BrokerState, Any], bool]
Effect = Callable[[BrokerConfig, BrokerState, Any], Next]

ACTOR_MODULES: tuple[ModuleType, ...] = (remoting, workers, commitservice, fastfailure, environment)
"""The modules that declare actions, in the order of the spec's tables."""


class ActionNotEnabled(ValueError):
    """``step`` was asked to take an action whose guard is false."""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _rules(module: ModuleType) -> Iterator[tuple[type[Action], Guard, Effect]]:
    """Each action class ``module`` declares, with its guard and effect (found by name)."""
    for cls in vars(module).values():
        if isinstance(cls, type) and issubclass(cls, Action) and cls.__module__ == module.__name__:
            name = _snake(cls.__name__)
            yield cls, getattr(module, f"{name}_enabled"), getattr(module, name)


RULES: dict[type[Action], tuple[Guard, Effect]] = {
    cls: (guard, effect) for module in ACTOR_MODULES for cls, guard, effect in _rules(module)
}
"""Action class → (guard, effect), in declaration order."""

ACTION_TYPES: tuple[type[Action], ...] = tuple(RULES)
"""Every action class; an event's ``kind`` in a trace is one of their names."""

KINDS: dict[str, type[Action]] = {cls.__name__: cls for cls in ACTION_TYPES}
"""Action class by name."""


def enabled(config: BrokerConfig, s: BrokerState, a: Action) -> bool:
    """Whether ``a``'s guard holds in ``s``."""
    guard, _ = RULES[type(a)]
    return guard(config, s, a)


def step(config: BrokerConfig, s: BrokerState, a: Action) -> tuple[BrokerState, Outputs]:
    """The state after ``a`` and what the step output; raises :class:`ActionNotEnabled` if its guard is false."""
    guard, effect = RULES[type(a)]
    if not guard(config, s, a):
        raise ActionNotEnabled(f"{a!r} is not enabled")
    return effect(config, s, a)


# -- The environment's choices ----------------------------------------------------------------------


@record
class RequestTemplate:
    """A kind of request the environment may send."""

    code: int
    topic: str = "TopicTest"
    oneway: bool = False


@record
class Environment:
    """What the outside world may do, bounded so that the reachable states are finite."""

    requests: tuple[RequestTemplate, ...]  # the kinds of request producers may send
    max_requests: int  # how many requests arrive in all
    clock_steps: tuple[int, ...]  # the amounts (ms) the clock may advance by in one step
    max_elapsed_ms: int  # the clock never passes start + this
    exceptions_in_lock: bool = False  # whether a worker inside the put lock may throw (workers.WorkerThrowsInsideLock)
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


def _steps_of(actor: type[A]) -> tuple[type[A], ...]:
    """The action classes a thread of this actor takes, in declaration order."""
    return tuple(cls for cls in ACTION_TYPES if issubclass(cls, actor))


_IO_STEPS = _steps_of(IoThreadStep)
_WORKER_STEPS = _steps_of(WorkerStep)
# Phase 2's steps name the queue being scanned; the other fast-failure steps take no argument.
_THREAD_STEPS: tuple[Callable[[], Action], ...] = _steps_of(CommitServiceStep) + tuple(
    cls for cls in _steps_of(FastFailureStep) if not dataclasses.fields(cls)
)
_QUEUE_SCAN_STEPS: tuple[Callable[[ExecutorName], Action], ...] = tuple(
    cls for cls in _steps_of(FastFailureStep) if dataclasses.fields(cls)
)


def candidate_actions(config: BrokerConfig, s: BrokerState, env: Environment) -> Iterator[Action]:
    """Every action the threads and the environment could take in ``s`` (enabled or not)."""
    for io in range(len(s.io_threads)):
        if s.next_request_id <= env.max_requests:
            for t in env.requests:
                yield remoting.RequestArrives(io, t.code, t.topic, t.oneway)
        if env.limiter_overflows:
            yield remoting.RateLimitHandlerFailsOpen(io)
        for io_step in _IO_STEPS:
            yield io_step(io)
    for executor in s.executors:
        for w in range(len(executor.workers)):
            for worker_step in _WORKER_STEPS:
                yield worker_step(executor.name, w)
            if env.exceptions_in_lock:
                yield workers.WorkerThrowsInsideLock(executor.name, w)
    for make in _THREAD_STEPS:
        yield make()
    for queue, _ in s.queue_waits:
        for scan in _QUEUE_SCAN_STEPS:
            yield scan(queue)
    run_due = s.fast_failure_phase is FastFailurePhase.IDLE and s.now >= s.fast_failure_next_run
    if not (env.punctual_fast_failure and run_due):
        for ms in env.clock_steps:
            if s.now + ms <= config.start_time_ms + env.max_elapsed_ms:
                yield environment.ClockAdvances(ms)
    for value in env.fast_failure_toggles:
        yield environment.OperatorSetsFastFailureEnable(value)
    for queue, wait in env.queue_wait_changes:
        yield environment.OperatorSetsQueueWait(queue, wait)
    if s.next_foreign_id <= env.max_foreign_tasks:
        for name in env.foreign_tasks:
            yield environment.InternalTaskSubmitted(name)
    if env.ha_appends:
        yield environment.HaServiceAcquiresPutLock()
        yield environment.HaServiceReleasesPutLock()


def actions(config: BrokerConfig, s: BrokerState, env: Environment) -> list[Action]:
    """The actions enabled in ``s`` under ``env``."""
    return [a for a in candidate_actions(config, s, env) if enabled(config, s, a)]


def successors(
    config: BrokerConfig, s: BrokerState, env: Environment
) -> Iterator[tuple[Action, BrokerState, Outputs]]:
    """Each enabled action with the state it leads to and its outputs (the guard is evaluated once)."""
    for a in candidate_actions(config, s, env):
        guard, effect = RULES[type(a)]
        if guard(config, s, a):
            after, outputs = effect(config, s, a)
            yield a, after, outputs
