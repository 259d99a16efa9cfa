"""Exhaustive, bounded exploration of a small broker: every reachable state, every claim.

Breadth-first from the initial state over :func:`spec.machine.successors`, so the first path
found to any state is a shortest one. Every state is checked against every state claim, every
edge against every monitor (with the step's outputs), every state (optionally) against bounded liveness, and the
sometimes-properties are collected over all states. For each broken claim the shortest
counterexample is kept and exploration goes on, so one run reports every claim.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from spec.actors import Action
from spec.config import BrokerConfig
from spec.invariants import EVENTUALLY, SOMETIMES, broken_monitors, broken_state_claims
from spec.machine import Environment, successors
from spec.state import BrokerState, initial_state
from properties.steptable import Step


@dataclass
class Counterexample:
    """The shortest run found that breaks one claim."""

    claim: str
    steps: list[Step]


@dataclass
class Exploration:
    """What one exploration found."""

    states: int = 0
    transitions: int = 0
    max_depth: int = 0
    complete: bool = True  # False when max_states stopped it early
    seconds: float = 0.0
    liveness_checked: int = 0
    counterexamples: dict[str, Counterexample] = field(default_factory=dict)
    sometimes: dict[str, bool] = field(default_factory=dict)
    action_counts: dict[str, int] = field(default_factory=dict)


def _path(parents: dict[BrokerState, tuple[BrokerState, Action] | None], s: BrokerState) -> list[Step]:
    steps: list[Step] = []
    while (link := parents[s]) is not None:
        parent, action = link
        steps.append(Step(action, s))
        s = parent
    steps.reverse()
    return steps


def explore(
    config: BrokerConfig,
    env: Environment,
    *,
    check_liveness: bool = True,
    max_states: int | None = None,
) -> Exploration:
    """Explore every state reachable under ``env``; see the module docstring."""
    started = time.perf_counter()
    result = Exploration(sometimes={c.name: False for c in SOMETIMES}, action_counts={})
    init = initial_state(config)
    parents: dict[BrokerState, tuple[BrokerState, Action] | None] = {init: None}
    depth: dict[BrokerState, int] = {init: 0}
    frontier: deque[BrokerState] = deque([init])

    verdicts: dict[BrokerState, bool] = {}  # bounded liveness, remembered along each fair run

    def record(claim: str, s: BrokerState) -> None:
        if claim not in result.counterexamples:
            result.counterexamples[claim] = Counterexample(claim, _path(parents, s))

    while frontier:
        s = frontier.popleft()
        result.states += 1
        result.max_depth = max(result.max_depth, depth[s])
        for claim in broken_state_claims(config, s):
            record(claim, s)
        if check_liveness:
            result.liveness_checked += 1
            for eventually in EVENTUALLY:
                if not eventually.check(config, s, env, verdicts):
                    record(eventually.name, s)
        for a, t, out in successors(config, s, env):
            result.transitions += 1
            for c in SOMETIMES:
                if not result.sometimes[c.name] and c.check(config, t, out):
                    result.sometimes[c.name] = True
            name = type(a).__name__
            result.action_counts[name] = result.action_counts.get(name, 0) + 1
            if t not in parents:
                parents[t] = (s, a)
                depth[t] = depth[s] + 1
                for claim in broken_monitors(config, s, a, t, out):
                    record(claim, t)
                if max_states is not None and len(parents) > max_states:
                    result.complete = False
                    continue
                frontier.append(t)
            else:
                for claim in broken_monitors(config, s, a, t, out):
                    if claim not in result.counterexamples:
                        result.counterexamples[claim] = Counterexample(claim, _path(parents, s) + [Step(a, t)])
    result.seconds = time.perf_counter() - started
    return result
