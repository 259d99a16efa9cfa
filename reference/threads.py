"""What runs on a broker thread, one atomic step at a time, and the fault that can be thrown into one."""

from __future__ import annotations

from collections.abc import Generator

from spec.actors import Action

ThreadBody = Generator[Action | None, None, None]
"""A thread's run loop: each ``next()`` performs one atomic step and yields its action, or None
when the thread cannot move (blocked in ``take()``, waiting for the lock, run not due)."""


class InjectedFault(Exception):
    """An exception thrown inside the put lock's critical section (fault injection)."""
