"""The read sets the replay relies on to skip claims (``Claim.reads``, the transition claims' scope).

A long replay re-checks a state claim only after a step that changed a field the claim reads,
and a transition claim only after a step that wrote a response. Both shortcuts are sound only
if the declarations are right, so this test watches the claims over reachable states of every
model (breadth first, the first few hundred states of each, two profiles) and fails on:
- a BrokerState attribute a state claim reads that its ``reads`` does not list (methods and
  properties of the state are followed, so ``s.executor(name)`` counts as reading ``executors``);
- a transition claim that is false on a step that wrote no response.
"""

from __future__ import annotations

import types
from collections import deque
from typing import Any

import pytest

from spec.config import BrokerConfig
from spec.invariants import STATE_CLAIMS, TRANSITION_CLAIMS
from spec.machine import successors
from spec.models import MODELS
from spec.profiles import profile
from spec.state import BrokerState, initial_state

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


def _reachable(config: BrokerConfig, env: Any) -> list[tuple[BrokerState, Any, BrokerState]]:
    """Transitions among the first STATES_PER_MODEL states, breadth first."""
    start = initial_state(config)
    seen, frontier, steps = {start}, deque([start]), []
    while frontier and len(seen) < STATES_PER_MODEL:
        s = frontier.popleft()
        for a, after in successors(config, s, env):
            steps.append((s, a, after))
            if after not in seen:
                seen.add(after)
                frontier.append(after)
    return steps


@pytest.fixture(scope="module", params=[(m, v) for m in MODELS for v in ("4.3.2", "5.3.3")], ids=lambda p: f"{p[0]}-{p[1]}")
def transitions(request: pytest.FixtureRequest) -> tuple[BrokerConfig, list[tuple[BrokerState, Any, BrokerState]]]:
    name, version = request.param
    model = MODELS[name](profile(version))
    return model.config, _reachable(model.config, model.env)


def test_state_claims_read_only_what_they_declare(transitions: tuple[BrokerConfig, list[Any]]) -> None:
    config, steps = transitions
    for claim in STATE_CLAIMS:
        assert claim.reads is not None, f"{claim.name} declares no read set"
        read: set[str] = set()
        for _, _, after in steps:
            watched = _Watched(after)
            claim.check(config, watched)
            read |= watched.read
        assert read <= claim.reads, f"{claim.name} reads {sorted(read - claim.reads)} beyond its declared {sorted(claim.reads)}"


def test_transition_claims_hold_on_steps_without_responses(transitions: tuple[BrokerConfig, list[Any]]) -> None:
    config, steps = transitions
    silent = [(b, a, s) for b, a, s in steps if s.responses == b.responses]
    assert silent, "no step without a response: the check below would be vacuous"
    for claim in TRANSITION_CLAIMS:
        for before, action, after in silent:
            assert claim.check(config, before, action, after), f"{claim.name} is false on {action!r}, which wrote no response"


def test_the_watcher_sees_reads_through_methods() -> None:
    """The watcher itself: ``executor()`` and ``answered`` are followed to the fields they read."""
    model = MODELS["overload"](profile("5.3.3"))
    watched = _Watched(initial_state(model.config))
    watched.executor(model.config.executors[0].name)
    _ = watched.answered
    assert watched.read == {"executors", "responses"}
