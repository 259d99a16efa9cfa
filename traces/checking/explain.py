"""Why the spec could not take an event: the guard that failed, the state it read, what was allowed.

A divergence is explained once per trace, so this is plain Python, apart from the replay that is
compiled for speed. Requests are named by the trace's own opaques (``#7001``), not by the spec's
numbering.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from properties.steptable import describe_action, render
from spec.actors import Action
from spec.config import BrokerConfig
from spec.machine import RULES, Environment, candidate_actions, enabled
from spec.state import BrokerState

_FIELDS = frozenset(f.name for f in dataclasses.fields(BrokerState))
#: The environment whose candidate actions are every thread's possible step (no inputs, no faults).
_THREADS_ONLY = Environment(requests=(), max_requests=0, clock_steps=(), max_elapsed_ms=0)


def with_opaques(text: str, opaque_of: Mapping[int, int]) -> str:
    """``text`` with the spec's request ids (``r3``) replaced by the trace's opaques (``#7001``)."""
    return re.sub(r"\br(\d+)\b", lambda m: f"#{opaque_of.get(int(m.group(1)), '?' + m.group(1))}", text)


def fields_read(config: BrokerConfig, s: BrokerState, a: Action) -> list[str]:
    """The state fields ``a``'s guard reads in ``s``, in the order it reads them."""
    read: list[str] = []

    class Watched(type(s)):  # type: ignore[misc]  # a BrokerState that notes each field read
        def __getattribute__(self, name: str) -> Any:
            if name in _FIELDS and name not in read:
                read.append(name)
            return object.__getattribute__(self, name)

    watched = object.__new__(Watched)
    object.__setattr__(watched, "__dict__", dict(vars(s)))
    guard, _ = RULES[type(a)]
    guard(config, watched, a)
    return read


def not_enabled(config: BrokerConfig, s: BrokerState, a: Action, opaque_of: Mapping[int, int]) -> tuple[str, str, str]:
    """(expected, observed, state) of an event whose action's guard is false in ``s``."""
    guard, _ = RULES[type(a)]
    condition = (guard.__doc__ or "").strip().splitlines()[0].removeprefix("Guard:").strip()
    allowed = [describe_action(b) for b in candidate_actions(config, s, _THREADS_ONLY) if enabled(config, s, b)]
    reads = fields_read(config, s, a)
    expected = f"one of the steps the spec allows here: {', '.join(allowed) or 'none (every thread is blocked)'}"
    observed = f"{describe_action(a)}, whose guard does not hold: {condition}"
    state = "; ".join(f"{name}={render(name, getattr(s, name))}" for name in reads)
    return expected, observed, with_opaques(state, opaque_of)
