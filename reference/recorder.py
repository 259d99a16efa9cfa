"""What the reference broker reports after every step: the action, the responses it wrote, the clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from spec.actors import Action
from spec.state import Response


class Recorder(Protocol):
    """Receives each step of a :class:`reference.broker.Broker` as it happens."""

    def record(self, action: Action, responses: tuple[Response, ...], now: int) -> None:
        """``action`` was performed; ``responses`` were written during it; ``now`` is the broker clock (ms)."""
        ...


@dataclass(frozen=True)
class RecordedStep:
    """One step as a recorder saw it."""

    action: Action
    responses: tuple[Response, ...]
    now: int


@dataclass
class ListRecorder:
    """Keeps every step in order."""

    steps: list[RecordedStep] = field(default_factory=list)

    def record(self, action: Action, responses: tuple[Response, ...], now: int) -> None:
        self.steps.append(RecordedStep(action, responses, now))
