"""Hypothesis state machines that drive the spec and an implementation in lockstep.

One rule per spec action, named like it (``worker_takes_task`` for :class:`WorkerTakesTask`),
generated from :data:`spec.machine.ACTION_TYPES` so that a new action gets its rule. A rule's
precondition is "the spec enables some action of this kind" (:func:`spec.machine.enabled`, through
:meth:`LockstepRun.enabled`); the rule then draws one of the enabled actions, so no ``assume()``
filters anything. After every step each thread the spec cannot move is asked to step and must
refuse; once the spec enables nothing at all, the rule ``nothing_happens`` repeats that check
for the rest of the run. The invariants are the checks of :mod:`properties.lockstep`.

A machine class is built per bench, profile and implementation by :func:`lockstep_machine`; its
runs add up in the class's ``coverage``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from properties.benches import Bench
from properties.lockstep import BrokerFactory, Coverage, LockstepRun
from spec.machine import ACTION_TYPES
from spec.profiles import Profile


def rule_name(action_type: type) -> str:
    """``WorkerTakesTask`` → ``worker_takes_task``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", action_type.__name__).lower()


class LockstepMachine(RuleBasedStateMachine):
    """The common part of every lockstep machine; :func:`lockstep_machine` adds the rules."""

    coverage: ClassVar[Coverage]  # every finished run of this class adds its coverage here

    def __init__(self) -> None:
        super().__init__()
        self._run: LockstepRun | None = None

    @property
    def run(self) -> LockstepRun:
        """The lockstep run of this example (created by the initialize rule)."""
        assert self._run is not None, "the initialize rule has not run"
        return self._run

    def teardown(self) -> None:
        if self._run is not None:
            type(self).coverage.merge(self._run.finish())

    # Hypothesis runs invariants in name order; the names keep the order of properties.lockstep
    # (claims, transition claims, the action, the whole state, stuck threads), so that a
    # discrepancy is reported by the most specific check that sees it.

    @invariant()
    def observed_state_keeps_the_state_claims(self) -> None:
        """Every STATE_CLAIM is as true of reference.observe() as of the spec state."""
        if self._run is not None:
            self.run.check_state_claims()

    @invariant()
    def observed_step_keeps_the_monitors(self) -> None:
        """Every monitor is as true of the reference's last step (and its outputs) as of the spec's."""
        if self._run is not None:
            self.run.check_monitors()

    @invariant()
    def reference_acts_as_the_spec(self) -> None:
        """The reference reported the action the spec took."""
        if self._run is not None:
            self.run.check_action()

    @invariant()
    def reference_observes_the_spec_state(self) -> None:
        """reference.observe() == spec state, and reference.responses == the spec's."""
        if self._run is not None:
            self.run.check_refinement()

    @invariant()
    def threads_the_spec_cannot_move_stay_put(self) -> None:
        """Every thread with no enabled spec step refuses to step when asked, and nothing changes."""
        if self._run is not None:
            self.run.stay_put()

    def _quiescent(self) -> bool:
        return self._run is not None and self.run.quiescent()

    @precondition(_quiescent)
    @rule()
    def nothing_happens(self) -> None:
        """The environment is spent and every thread is blocked: a run's remaining steps ask every
        thread to step once more, and none may move."""
        self.run.stay_put()


def _action_rule(action_type: type) -> Callable[..., None]:
    """The rule for one action: enabled when the spec enables some action of that type."""

    def take(self: LockstepMachine, data: st.DataObject) -> None:
        self.run.apply(data.draw(st.sampled_from(self.run.enabled(action_type)), label="action"))

    take.__name__ = take.__qualname__ = rule_name(action_type)
    take.__doc__ = f"Take an enabled {action_type.__name__} in the spec and in the reference."
    guarded: Callable[..., None] = precondition(lambda self: self._run is not None and bool(self.run.enabled(action_type)))(
        rule(data=st.data())(take)
    )
    return guarded


def lockstep_machine(bench: Bench, profile: Profile, factory: BrokerFactory) -> type[LockstepMachine]:
    """A machine class for one bench and profile, driving implementations built by ``factory``."""
    configs = bench.configs(profile)

    def choose_configuration(self: LockstepMachine, variant: int) -> None:
        self._run = LockstepRun(configs[variant], factory, bench.env)

    namespace: dict[str, Any] = {rule_name(t): _action_rule(t) for t in ACTION_TYPES}
    namespace.update(
        coverage=Coverage(runs=0),
        choose_configuration=initialize(variant=st.integers(0, len(configs) - 1))(choose_configuration),
    )
    name = f"{bench.name.capitalize()}Lockstep_{profile.version.replace('.', '_')}"
    return type(name, (LockstepMachine,), namespace)


def run_machine(machine: type[LockstepMachine], run_settings: settings | None = None) -> Coverage:
    """Run ``machine`` as a test under ``run_settings`` (the loaded profile if None); return its coverage."""
    run_state_machine_as_test(machine, settings=run_settings)
    return machine.coverage
