"""Why the spec could not take an event: the guard that failed, the state it read, what was allowed.

A divergence is explained once per trace, so this is plain Python, apart from the replay that is
compiled for speed. Requests are named by the trace's own opaques (``#7001``), not by the spec's
numbering.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from properties.steptable import describe_action, render
from spec.actors import Action
from spec.config import BrokerConfig
from spec.machine import RULES, Environment, candidate_actions, enabled
from spec.state import BrokerState

_FIELDS = frozenset(f.name for f in dataclasses.fields(BrokerState))
#: The environment whose candidate actions are every thread's possible step (no inputs, no faults).
_THREADS_ONLY = Environment(requests=(), max_requests=0, clock_steps=(), max_elapsed_ms=0)


@functools.cache
def _docstrings(path: str) -> dict[str, str]:
    """The docstring of every function in the source file ``path``."""
    tree = ast.parse(Path(path).read_text())
    return {n.name: ast.get_docstring(n) or "" for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def docstring(function: Callable[..., object]) -> str:
    """A function's docstring, also where it runs compiled by mypyc (which keeps none): from the
    source file beside the compiled module."""
    if function.__doc__:
        return function.__doc__
    module = sys.modules[function.__module__]
    source = Path(module.__file__ or "").with_name(function.__module__.rsplit(".", 1)[-1] + ".py")
    return _docstrings(str(source)).get(function.__name__, "") if source.is_file() else ""


def with_opaques(text: str, opaque_of: Mapping[int, int]) -> str:
    """``text`` with the spec's request ids (``r3``) replaced by the trace's opaques (``#7001``)."""
    return re.sub(r"\br(\d+)\b", lambda m: f"#{opaque_of.get(int(m.group(1)), '?' + m.group(1))}", text)


def fields_read(config: BrokerConfig, s: BrokerState, a: Action) -> list[str]:
    """The state fields ``a``'s guard reads in ``s``, in the order it reads them.

    BrokerState notes each field read while the guard runs (its ``__getattribute__`` is set for the
    call and removed after): a subclass would not do, since the compiled spec accepts a BrokerState
    only. A replay's process runs one guard at a time.
    """
    read: list[str] = []

    def watching(self: BrokerState, name: str) -> Any:
        if name in _FIELDS and name not in read:
            read.append(name)
        return object.__getattribute__(self, name)

    guard, _ = RULES[type(a)]
    setattr(BrokerState, "__getattribute__", watching)
    try:
        guard(config, s, a)
    finally:
        delattr(BrokerState, "__getattribute__")
    return read


def not_enabled(config: BrokerConfig, s: BrokerState, a: Action, opaque_of: Mapping[int, int]) -> tuple[str, str, str]:
    """(expected, observed, state) of an event whose action's guard is false in ``s``."""
    guard, _ = RULES[type(a)]
    condition = docstring(guard).strip().splitlines()[0].removeprefix("Guard:").strip()
    allowed = [describe_action(b) for b in candidate_actions(config, s, _THREADS_ONLY) if enabled(config, s, b)]
    reads = fields_read(config, s, a)
    expected = f"one of the steps the spec allows here: {', '.join(allowed) or 'none (every thread is blocked)'}"
    observed = f"{describe_action(a)}, whose guard does not hold: {condition}"
    state = "; ".join(f"{name}={render(name, getattr(s, name))}" for name in reads)
    return expected, observed, with_opaques(state, opaque_of)
