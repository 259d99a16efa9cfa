"""Named scenarios from the source articles and RocketMQ's own tests, spec and reference in lockstep.

Each scenario (properties/scenarios.py) asserts exact responses, code and remark, and every step
is checked against the spec as in the property suites.
"""

from __future__ import annotations

import pytest

from properties.scenarios import SCENARIOS
from reference.broker import Broker
from spec.releases import PROFILES

CASES = [(name, version) for name, s in SCENARIOS.items() for version in s.versions]


@pytest.mark.parametrize(("scenario", "version"), CASES, ids=[f"{n}[{v}]" for n, v in CASES])
def test_scenario(scenario: str, version: str) -> None:
    SCENARIOS[scenario].run(PROFILES[version], Broker)
