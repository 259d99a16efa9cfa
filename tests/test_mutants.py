"""The mutation check: every mutant of the reference must be caught by the lockstep suites.

The full run (``make mutants``, ``python -m properties.mutants``) takes minutes; this test judges a
representative subset, one per component, that each machine catches in about a second.
"""

from __future__ import annotations

import pytest

from properties import mutants

REPRESENTATIVES = (
    mutants.QueueCapacityOffByOne,
    mutants.ResetMissingOnExceptionPath,
    mutants.BufferReturnedTwice,
    mutants.FixedDelaySchedule,
    mutants.TakeWithoutBookkeeping,
    mutants.CanAcquireBeforeReserve,
    mutants.StopRunTaskStillRuns,
)


@pytest.mark.parametrize("mutant", REPRESENTATIVES, ids=lambda m: m.__name__)
def test_mutant_is_caught(mutant: type) -> None:
    verdict = mutants.judge(mutant)
    assert verdict.caught_by is not None, f"{mutant.__name__} survived: {verdict.where}"
    assert verdict.caught_by == getattr(mutant, "expected"), f"{mutant.__name__} caught by {verdict.caught_by} in {verdict.where}"


def test_every_mutant_overrides_one_method_of_one_part() -> None:
    from reference.broker import PART_SLOTS, Broker

    for mutant in mutants.MUTANTS:
        parts = [base for _, base in PART_SLOTS if issubclass(mutant, base)]
        assert len(parts) == 1, f"{mutant.__name__} extends {parts}, not one part of the broker"
        own = [n for n, v in vars(mutant).items() if callable(v) and not n.startswith("__")]
        assert len(own) == 1 and hasattr(parts[0], own[0]), f"{mutant.__name__} overrides {own}"
        assert mutant.__doc__, f"{mutant.__name__} has no docstring naming its bug"
        assert issubclass(Broker.with_part(mutant), Broker)


def test_a_class_that_is_no_part_is_refused() -> None:
    from reference.broker import Broker

    with pytest.raises(TypeError, match="extends none of the broker's parts"):
        Broker.with_part(int)
