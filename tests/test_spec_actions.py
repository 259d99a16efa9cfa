"""Generic checks of the action vocabulary over random runs of every profile.

- An action changes only the state fields its docstring's ``Changes:`` line lists.
- ``step`` refuses an action whose guard is false.
- The state claims hold along runs whose environment has no fault that breaks them.
"""

from __future__ import annotations

import random
from dataclasses import fields, replace
from typing import Any

import pytest

from spec.actors import Action
from spec.machine import ACTION_TYPES, RULES
from spec.codes import RequestCode
from properties.docgen import labelled
from spec.invariants import broken_monitors, broken_state_claims
from spec.machine import ActionNotEnabled, Environment, RequestTemplate, actions, candidate_actions, enabled, step
from properties.models import MODELS, Model
from spec.profiles import ExecutorName
from spec.releases import PROFILES
from spec.config import BrokerConfig
from spec.remoting import STEP_STAGES as IO_STEP_STAGES
from spec.state import BrokerState, IoStage, WorkerStage, initial_state, with_executor, with_io_thread, with_worker
from spec.workers import STEP_STAGES as WORKER_STEP_STAGES
from spec.actors import (
    COMMIT_SERVICE,
    FAST_FAILURE,
    CommitServiceStep,
    EnvironmentInput,
    FastFailureStep,
    Fault,
    IoThreadId,
    IoThreadStep,
    thread_of,
    WorkerId,
    WorkerStep,
)

STATE_FIELDS = {f.name for f in fields(BrokerState)}
DECLARED = {cls: {x.strip() for x in labelled(cls.__doc__, "Changes").split(",")} for cls in ACTION_TYPES}

#: Everything the environment may do, including the rarer choices the exploration models leave out.
RICH: dict[str, Any] = dict(
    max_foreign_tasks=2,
    foreign_tasks=(ExecutorName.SEND,),
    ha_appends=True,
    fast_failure_toggles=(True, False),
    queue_wait_changes=((ExecutorName.SEND, 0), (ExecutorName.SEND, 3)),
    exceptions_in_lock=True,
    limiter_overflows=True,
)


def test_changes_lines_name_real_state_fields() -> None:
    for cls, names in DECLARED.items():
        assert names <= STATE_FIELDS, f"{cls.__name__} declares unknown fields {names - STATE_FIELDS}"


#: A oneway send: the models send two-way ones only (their brokers have the send executor alone,
#: so a code routed elsewhere could not even arrive).
ONEWAY_SEND = RequestTemplate(RequestCode.SEND_MESSAGE, "TopicTest", True)


def _rich_env(model: Model, *, extra_ms: int, extra_requests: int = 0, **overrides: Any) -> Environment:
    """The model's environment with oneway sends, a longer clock and every choice in :data:`RICH`."""
    return replace(
        model.env,
        requests=model.env.requests + (ONEWAY_SEND,),
        max_requests=model.env.max_requests + extra_requests,
        max_elapsed_ms=model.env.max_elapsed_ms + extra_ms,
        **{**RICH, **overrides},
    )


def _walks(profile: str, steps: int, seed: int, every_code: bool = False) -> list[tuple[BrokerConfig, BrokerState, Action, BrokerState]]:
    """Random runs of every model under ``profile``: each step with the model's config. With
    ``every_code``, producers also send each code the release routes to the model's executors."""
    rng = random.Random(seed)
    taken = []
    for make in MODELS.values():
        model = make(PROFILES[profile])
        env = _rich_env(model, extra_ms=6, extra_requests=2)
        if every_code:
            served = {e.name for e in model.config.executors}
            codes = sorted(code for code, name in model.config.profile.executor_of_code if name in served)
            env = replace(env, requests=env.requests + tuple(RequestTemplate(code, "TopicTest", False) for code in codes))
        s = initial_state(model.config)
        for _ in range(steps):
            enabled_now = actions(model.config, s, env)
            if not enabled_now:
                break
            a = rng.choice(enabled_now)
            after, _ = step(model.config, s, a)
            taken.append((model.config, s, a, after))
            s = after
    return taken


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_an_action_changes_only_the_fields_it_declares(profile: str) -> None:
    fired: set[str] = set()
    for seed in range(6):
        for _, before, a, after in _walks(profile, 120, seed):
            changed = {f for f in STATE_FIELDS if getattr(before, f) != getattr(after, f)}
            undeclared = changed - DECLARED[type(a)]
            assert not undeclared, f"{a!r} changed {sorted(undeclared)}, which its Changes: line does not list"
            fired.add(type(a).__name__)
    # The walks are only evidence for the actions they fired; most must fire for the check to mean much.
    assert len(fired) >= 25, f"only {sorted(fired)} fired"


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_a_threads_step_is_enabled_only_in_the_stages_its_table_lists(profile: str) -> None:
    """The partial replay tries a thread's step only where the thread is in a stage that
    spec.workers.STEP_STAGES or spec.remoting.STEP_STAGES lists for it: a guard true in another
    stage would be a run the search never explores, and an exhaustive search's violation false.
    Each state of the random walks, with each thread put in turn in every stage (whether or not a
    run reaches that state: a guard's first test reads the stage alone)."""
    assert set(WORKER_STEP_STAGES) == {cls for cls in ACTION_TYPES if issubclass(cls, WorkerStep)}
    assert set(IO_STEP_STAGES) == {cls for cls in ACTION_TYPES if issubclass(cls, IoThreadStep)}
    refused: set[tuple[str, str]] = set()  # (step, stage not listed) seen with the guard false
    for seed in range(2):
        for config, before, _, _ in _walks(profile, 120, seed, every_code=True):
            for e in before.executors:
                for w, worker in enumerate(e.workers):
                    for stage in WorkerStage:
                        s = with_executor(before, with_worker(e, w, replace(worker, stage=stage)))
                        for cls, stages in WORKER_STEP_STAGES.items():
                            if stage not in stages:
                                assert not RULES[cls][0](config, s, cls(e.name, w)), f"{cls.__name__} enabled for a worker in {stage}"
                                refused.add((cls.__name__, stage.name))
            for i, io in enumerate(before.io_threads):
                for io_stage in IoStage:
                    s = with_io_thread(before, i, replace(io, stage=io_stage))
                    for io_cls, io_stages in IO_STEP_STAGES.items():
                        if io_stage not in io_stages:
                            assert not RULES[io_cls][0](config, s, io_cls(i)), f"{io_cls.__name__} enabled for a remoting thread in {io_stage}"
                            refused.add((io_cls.__name__, io_stage.name))
    # Every step was tried in every stage its table leaves out.
    assert len(refused) == sum(len(WorkerStage) - len(v) for v in WORKER_STEP_STAGES.values()) + sum(
        len(IoStage) - len(v) for v in IO_STEP_STAGES.values()
    )


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_step_refuses_a_disabled_action(profile: str) -> None:
    model = MODELS["overload"](PROFILES[profile])
    s = initial_state(model.config)
    disabled = [a for a in candidate_actions(model.config, s, model.env) if not enabled(model.config, s, a)]
    assert disabled
    for a in disabled:
        with pytest.raises(ActionNotEnabled):
            step(model.config, s, a)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_claims_hold_on_random_runs_with_every_environment_choice_but_the_lock_fault(profile: str) -> None:
    """The explorer checks the models exhaustively; these runs add what the models leave out:
    operators changing settings, foreign queue elements, replication holding the lock, oneway
    sends. The exception inside the lock is left out: it breaks a claim on purpose."""
    rng = random.Random(7)
    for make in MODELS.values():
        model = make(PROFILES[profile])
        env = _rich_env(model, extra_ms=4, exceptions_in_lock=False)
        for _ in range(3):
            s = initial_state(model.config)
            for _ in range(200):
                options = actions(model.config, s, env)
                if not options:
                    break
                a = rng.choice(options)
                after, out = step(model.config, s, a)
                assert broken_state_claims(model.config, after) == [], f"{model.name}: after {a!r}"
                assert broken_monitors(model.config, s, a, after, out) == [], f"{model.name}: {a!r}"
                s = after


def _example(cls: type) -> Action:
    """An instance of an action class with placeholder arguments."""
    placeholders: dict[str, object] = {
        "io_thread": 0,
        "executor": ExecutorName.SEND,
        "queue": ExecutorName.SEND,
        "worker": 0,
        "code": RequestCode.SEND_MESSAGE,
        "topic": "TopicTest",
        "oneway": False,
        "ms": 1,
        "enabled": True,
        "wait_ms": 0,
    }
    action: Action = cls(**{f.name: placeholders[f.name] for f in fields(cls)})
    return action


ACTORS = (IoThreadStep, WorkerStep, CommitServiceStep, FastFailureStep, EnvironmentInput, Fault)


def test_each_action_has_one_actor_and_is_taken_by_that_actors_thread() -> None:
    for cls in ACTION_TYPES:
        actors = [base for base in ACTORS if issubclass(cls, base)]
        assert len(actors) == 1, f"{cls.__name__} derives from {actors}"
        a = _example(cls)
        expected = {
            IoThreadStep: IoThreadId(0),
            WorkerStep: WorkerId(ExecutorName.SEND, 0),
            CommitServiceStep: COMMIT_SERVICE,
            FastFailureStep: FAST_FAILURE,
        }.get(actors[0])  # the environment's inputs and faults are fed, not stepped: None
        assert thread_of(a) == expected, cls.__name__


def test_an_action_has_a_guard_and_an_effect_next_to_it_each_citing_its_source() -> None:
    for cls, (guard, effect) in RULES.items():
        assert guard.__module__ == effect.__module__ == cls.__module__, cls.__name__
        assert (guard.__doc__ or "").startswith("Guard:"), guard.__name__
        assert (effect.__doc__ or "").startswith("Effect:"), effect.__name__
        assert labelled(guard.__doc__, "Source"), f"{guard.__name__} cites no Source:"
