"""The shortcuts the replay takes when it checks claims (``traces.checking.replay.CLAIM_READS``, the monitors' scope).

A long replay re-checks a state claim only after a step that changed a field the claim reads,
and the monitors only after a step that output something or admitted a request. Both shortcuts
are sound only if they are right, so this test watches the claims over reachable states of every
model (breadth first, the first few hundred states of each, two profiles) and fails on:
- a BrokerState attribute a state claim reads that ``CLAIM_READS`` does not list (methods and
  properties of the state are followed, so ``s.executor(name)`` counts as reading ``executors``);
- a monitor that is false on a step with no outputs that admitted no request.
"""

from __future__ import annotations

import types
from collections import deque
from typing import Any

import pytest

from spec.config import BrokerConfig
from spec.invariants import MONITORS, STATE_CLAIMS
from spec.machine import successors
from properties.models import MODELS
from spec.releases import profile
from spec.state import NO_OUTPUTS, BrokerState, Outputs, initial_state
from traces.checking.replay import CLAIM_READS

STATES_PER_MODEL = 400


class _Watched:
    """Stands in for a BrokerState and remembers every field read through it."""

    def __init__(self, s: BrokerState) -> None:
        self._state = s
        self.read: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(type(self._state), name, None)
        if isinstance(attribute, property) and attribute.fget is not None:
            return attribute.fget(self)  # a property reads fields through the watcher too
        if isinstance(attribute, types.FunctionType):
            return types.MethodType(attribute, self)
        self.read.add(name)
        return getattr(self._state, name)


Transition = tuple[BrokerState, Any, BrokerState, Outputs]


def _reachable(config: BrokerConfig, env: Any) -> list[Transition]:
    """Transitions among the first STATES_PER_MODEL states, breadth first."""
    start = initial_state(config)
    seen, frontier, steps = {start}, deque([start]), []
    while frontier and len(seen) < STATES_PER_MODEL:
        s = frontier.popleft()
        for a, after, out in successors(config, s, env):
            steps.append((s, a, after, out))
            if after not in seen:
                seen.add(after)
                frontier.append(after)
    return steps


@pytest.fixture(scope="module", params=[(m, v) for m in MODELS for v in ("4.3.2", "5.3.3")], ids=lambda p: f"{p[0]}-{p[1]}")
def transitions(request: pytest.FixtureRequest) -> tuple[BrokerConfig, list[Transition]]:
    name, version = request.param
    model = MODELS[name](profile(version))
    return model.config, _reachable(model.config, model.env)


def test_state_claims_read_only_what_they_declare(transitions: tuple[BrokerConfig, list[Any]]) -> None:
    config, steps = transitions
    assert set(CLAIM_READS) == {c.name for c in STATE_CLAIMS}
    for claim in STATE_CLAIMS:
        declared = CLAIM_READS[claim.name]
        read: set[str] = set()
        for _, _, after, _ in steps:
            watched = _Watched(after)
            claim.check(config, watched)
            read |= watched.read
        assert read, f"{claim.name} read nothing: the watcher missed its reads"
        assert read <= declared, f"{claim.name} reads {sorted(read - declared)} beyond {sorted(declared)}"


def test_monitors_hold_on_steps_with_no_outputs_and_no_arrival(transitions: tuple[BrokerConfig, list[Any]]) -> None:
    config, steps = transitions
    quiet = [(b, a, s, o) for b, a, s, o in steps if o == NO_OUTPUTS and s.next_request_id == b.next_request_id]
    assert quiet, "no quiet step: the check below would be vacuous"
    for claim in MONITORS:
        for before, action, after, out in quiet:
            assert claim.check(config, before, action, after, out), f"{claim.name} is false on {action!r}, which output nothing"


def test_the_watcher_sees_reads_through_methods() -> None:
    """The watcher itself: ``executor()`` and ``requests_inside()`` are followed to the fields they read."""
    model = MODELS["overload"](profile("5.3.3"))
    watched = _Watched(initial_state(model.config))
    watched.executor(model.config.executors[0].name)
    watched.requests_inside()
    assert watched.read == {"executors", "io_threads"}
