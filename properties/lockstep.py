"""Lockstep: the spec and an implementation driven through the same actions, compared at every step.

A :class:`LockstepRun` holds one spec state and one implementation (the reference broker, or a
mutant of it). Each action the spec enables is applied to both: an environment input is fed to
the implementation's method of the same name, a thread's step is requested from that thread,
and the implementation must answer with the very action the spec took. After each step four
checks run, in this order (the first that fails names the catch):

1. every state claim (:data:`spec.invariants.STATE_CLAIMS`) is as true of ``observe()`` as of
   the spec state. Where the spec itself breaks a claim it models a real broker bug (the stuck
   ``beginTimeInLock`` of 4.0–4.9.2 and 5.x); the implementation must break it at the same step.
2. every monitor (:data:`spec.invariants.MONITORS`) agrees on the observed step (before, action,
   after, and the outputs the implementation reports) as on the spec's step;
3. the implementation took the spec's action;
4. ``observe()`` equals the spec state, and the step's outputs equal the spec's;
5. every thread the spec cannot move now refuses to step when asked, and nothing changes.

A failure raises :class:`LockstepFailure`, whose message names the check, shows expected against
actual, and prints the implementation's run as a step table.

The implementation is anything with the :class:`BrokerUnderTest` methods; the harness never
reaches into it, so a mutant only has to override one method of one part of the reference.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn, Protocol, assert_never

from spec.actors import Action
from spec.machine import ACTION_TYPES
from spec.actors import ThreadId, thread_of, threads_of
from reference.lockstep import BrokerUnderTest, perform, step_thread
from spec.codes import RequestCode
from spec.config import BrokerConfig
from spec.invariants import MONITORS, SOMETIMES, STATE_CLAIMS
from spec.machine import Environment, actions, step
from spec.profiles import ExecutorName
from spec.state import NO_OUTPUTS, BrokerState, Outputs, Response, initial_state
from properties.steptable import Step, changed_fields, describe_action, step_table


BrokerFactory = Callable[[BrokerConfig], BrokerUnderTest]
"""Builds the implementation under test for one configuration (the reference class, or a mutant)."""


# -- Failures and coverage ------------------------------------------------------------------------------

REFINEMENT = "observe_equals_the_spec_state"
SAME_ACTION = "reference_takes_the_spec_action"
ACCEPTS_INPUT = "reference_accepts_every_enabled_action"
STAYS_PUT = "a_thread_that_cannot_move_stays_put"


class LockstepFailure(AssertionError):
    """The implementation and the spec disagreed; ``check`` names the claim or check that caught it."""

    def __init__(self, check: str, detail: str, table: str) -> None:
        super().__init__(f"{check}: {detail}\n\n{table}")
        self.check = check


@dataclass
class Coverage:
    """What lockstep runs exercised: actions fired, sometimes-properties reached, claims the spec broke."""

    runs: int = 0
    steps: int = 0
    seconds: float = 0.0
    actions: Counter[str] = field(default_factory=Counter)  # action name -> times fired
    sometimes: Counter[str] = field(default_factory=Counter)  # property -> runs that reached it
    spec_breaks: Counter[str] = field(default_factory=Counter)  # claim -> runs where the spec broke it

    def merge(self, other: Coverage) -> None:
        """Add ``other``'s counts to these."""
        self.runs += other.runs
        self.steps += other.steps
        self.seconds += other.seconds
        self.actions.update(other.actions)
        self.sometimes.update(other.sometimes)
        self.spec_breaks.update(other.spec_breaks)


def _diff(expected: BrokerState, actual: BrokerState) -> str:
    rows = changed_fields(expected, actual)
    return "\n".join(f"  {name}:\n    expected (spec):      {e}\n    actual (reference):   {a}" for name, e, a in rows)


@dataclass(frozen=True)
class _Transition:
    """The last step: both states before and after, the spec's action and the implementation's."""

    spec_before: BrokerState
    observed_before: BrokerState
    spec_action: Action
    reference_action: Action | None
    spec_after: BrokerState
    observed_after: BrokerState
    spec_outputs: Outputs
    observed_outputs: Outputs


@dataclass(frozen=True)
class _Enabled:
    """What the spec enables in one state, by action class and by thread."""

    by_kind: dict[type, list[Action]]
    by_thread: dict[ThreadId, Action]
    stuck: list[ThreadId]  # threads with no enabled step

    @staticmethod
    def of(config: BrokerConfig, s: BrokerState, env: Environment) -> _Enabled:
        by_kind: dict[type, list[Action]] = {k: [] for k in ACTION_TYPES}
        by_thread: dict[ThreadId, Action] = {}
        for a in actions(config, s, env):
            by_kind[type(a)].append(a)
            thread = thread_of(a)
            if thread is not None:
                assert thread not in by_thread, f"the spec enables two steps for {thread}: {by_thread[thread]}, {a}"
                by_thread[thread] = a
        return _Enabled(by_kind, by_thread, [t for t in threads_of(s) if t not in by_thread])


class LockstepRun:
    """One spec state and one implementation, stepped together (see the module docstring)."""

    def __init__(self, config: BrokerConfig, factory: BrokerFactory, env: Environment) -> None:
        self.config = config
        self.env = env
        self.broker = factory(config)
        self.spec = initial_state(config)
        self.initial = self.broker.observe()
        self.observed = self.initial
        self.steps: list[Step] = []
        self.last: _Transition | None = None
        self.coverage = Coverage(runs=1)
        # What the spec's steps output so far, for scenarios that assert a request's answer.
        self.responses: list[Response] = []
        self.finished_silently: set[int] = set()
        self._started = time.perf_counter()
        self._enabled: _Enabled | None = None
        self._reached: set[str] = set()
        self._note_reached()

    # -- what the spec allows now

    def enabled(self, kind: type) -> list[Action]:
        """The actions of class ``kind`` the spec enables now under the environment."""
        return self._now().by_kind[kind]

    def spec_step_of(self, thread: ThreadId) -> Action | None:
        """The step the spec enables for ``thread`` now (at most one: threads are deterministic)."""
        return self._now().by_thread.get(thread)

    def stuck_threads(self) -> list[ThreadId]:
        """Threads for which the spec enables no step now."""
        return self._now().stuck

    def _now(self) -> _Enabled:
        # Hypothesis asks every rule's precondition before each step: compute once per state.
        if self._enabled is None:
            self._enabled = _Enabled.of(self.config, self.spec, self.env)
        return self._enabled

    # -- stepping

    def apply(self, a: Action) -> None:
        """Apply ``a`` to the spec and to the implementation; the checks run separately."""
        spec_after, spec_outputs = step(self.config, self.spec, a)  # raises ActionNotEnabled: a harness or scenario error
        try:
            reference_action = perform(self.broker, a)
        except Exception as e:  # noqa: BLE001 - any exception from the implementation is the finding
            self._fail(ACCEPTS_INPUT, f"the spec enables {describe_action(a)}; the reference raised {e!r}")
        observed_outputs = self.broker.outputs if reference_action is not None else NO_OUTPUTS
        self.last = _Transition(
            self.spec, self.observed, a, reference_action, spec_after, self.broker.observe(), spec_outputs, observed_outputs
        )
        self.spec, self.observed = spec_after, self.last.observed_after
        self.responses += spec_outputs.responses
        self.finished_silently.update(spec_outputs.finished_silently)
        self.steps.append(Step(reference_action or a, self.observed))
        self._enabled = None
        self.coverage.steps += 1
        self.coverage.actions[type(a).__name__] += 1
        self._note_reached()

    def stay_put(self) -> None:
        """Every thread the spec cannot move now refuses to step when asked, and nothing changes."""
        for thread in self.stuck_threads():
            taken = step_thread(self.broker, thread)
            if taken is not None:
                self.steps.append(Step(taken, self.broker.observe()))
                self._fail(STAYS_PUT, f"the spec enables no step for {thread}; the reference took {describe_action(taken)}")
        if self.broker.observe() != self.observed:
            self._fail(STAYS_PUT, "threads that refused to step changed the state\n" + _diff(self.observed, self.broker.observe()))

    def quiescent(self) -> bool:
        """Whether the spec enables nothing at all: the environment is spent and every thread is blocked."""
        return not self._now().by_thread and not any(self._now().by_kind.values())

    def take(self, a: Action) -> None:
        """Apply ``a`` and run every check (what a scenario does at each step)."""
        self.apply(a)
        self.check_all()

    def step(self, thread: ThreadId) -> Action:
        """Take ``thread``'s one enabled spec step in lockstep and return it."""
        a = self.spec_step_of(thread)
        if a is None:
            raise ValueError(f"{thread} cannot move in the spec\n{step_table(self.initial, self.steps)}")
        self.take(a)
        return a

    def adopt(self, spec_state: BrokerState) -> None:
        """Continue from a hand-built spec state, once the caller has built the same state inside the
        implementation (a white-box scenario, like RocketMQ's own unit tests); checks they agree."""
        self.spec, self.observed, self._enabled = spec_state, self.broker.observe(), None
        self.check_refinement()

    def finish(self) -> Coverage:
        """The run's coverage, with its duration."""
        self.coverage.seconds = time.perf_counter() - self._started
        return self.coverage

    # -- checks

    def check_all(self) -> None:
        """Every check, in the order of the module docstring."""
        self.check_state_claims()
        self.check_monitors()
        self.check_action()
        self.check_refinement()
        self.stay_put()

    def check_state_claims(self) -> None:
        """Every state claim has the same truth value on observe() as on the spec state."""
        for claim in STATE_CLAIMS:
            in_spec = claim.check(self.config, self.spec)
            if claim.check(self.config, self.observed) != in_spec:
                expected = "holds" if in_spec else "is broken (a modelled broker bug)"
                actual = "is broken" if in_spec else "holds"
                self._fail(
                    claim.name,
                    f"expected: the claim {expected}, as in the spec state; actual: it {actual} in reference.observe()\n"
                    + _diff(self.spec, self.observed),
                )

    def check_monitors(self) -> None:
        """Every monitor has the same truth value on the observed step as on the spec's step."""
        t = self.last
        if t is None:
            return
        for claim in MONITORS:
            in_spec = claim.check(self.config, t.spec_before, t.spec_action, t.spec_after, t.spec_outputs)
            observed = claim.check(self.config, t.observed_before, t.spec_action, t.observed_after, t.observed_outputs)
            if observed != in_spec:
                self._fail(
                    claim.name,
                    f"step {describe_action(t.spec_action)}: expected the claim to be {in_spec}, as for the "
                    f"spec's step; actual: {not in_spec} for the reference's step\n" + _diff(t.spec_after, t.observed_after),
                )

    def check_action(self) -> None:
        """The implementation reported the action the spec took."""
        t = self.last
        if t is not None and t.reference_action != t.spec_action:
            taken = "nothing (None)" if t.reference_action is None else describe_action(t.reference_action)
            self._fail(SAME_ACTION, f"expected {describe_action(t.spec_action)}, the reference took {taken}")

    def check_refinement(self) -> None:
        """observe() equals the spec state, and the last step's outputs equal the spec's."""
        if self.observed != self.spec:
            self._fail(REFINEMENT, "reference.observe() differs from the spec state in\n" + _diff(self.spec, self.observed))
        t = self.last
        if t is not None and t.observed_outputs != t.spec_outputs:
            self._fail(
                REFINEMENT,
                f"the reference's outputs differ from the spec's\n  expected: {t.spec_outputs}\n"
                f"  actual:   {t.observed_outputs}",
            )

    def _fail(self, check: str, detail: str) -> NoReturn:
        raise LockstepFailure(check, detail, step_table(self.initial, self.steps, broken=check))

    def _note_reached(self) -> None:
        out = NO_OUTPUTS if self.last is None else self.last.spec_outputs
        for claim in SOMETIMES:
            if claim.name not in self._reached and claim.check(self.config, self.spec, out):
                self._reached.add(claim.name)
                self.coverage.sometimes[claim.name] += 1
        for claim in STATE_CLAIMS:
            if claim.name not in self._reached and not claim.check(self.config, self.spec):
                self._reached.add(claim.name)
                self.coverage.spec_breaks[claim.name] += 1
        t = self.last
        if t is not None:
            for claim in MONITORS:
                if claim.name not in self._reached and not claim.check(
                    self.config, t.spec_before, t.spec_action, t.spec_after, t.spec_outputs
                ):
                    self._reached.add(claim.name)
                    self.coverage.spec_breaks[claim.name] += 1
