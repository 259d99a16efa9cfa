"""The lockstep property suites: every bench's machine against the reference broker, for every profile.

Each run drives the spec and ``reference.broker.Broker`` through the same actions and checks, after
every step, the claims, the action taken and the whole observed state (:mod:`properties.lockstep`).
Budget: the loaded Hypothesis profile (tests/conftest.py).
"""

from __future__ import annotations

import pytest

from properties.benches import BENCHES
from properties.machines import lockstep_machine, run_machine
from reference.broker import Broker
from spec.profiles import PROFILES


@pytest.mark.parametrize("version", sorted(PROFILES))
@pytest.mark.parametrize("bench", sorted(BENCHES))
def test_reference_refines_the_spec(bench: str, version: str) -> None:
    coverage = run_machine(lockstep_machine(BENCHES[bench], PROFILES[version], Broker))
    assert coverage.steps > 0, f"the {bench} machine took no step under {version}"
