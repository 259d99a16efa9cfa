"""The coverage table of the whole-broker lockstep machine, one column per profile (print with -s)."""

from __future__ import annotations

from properties.benches import BENCHES
from properties.coverage import table
from properties.lockstep import Coverage
from properties.machines import lockstep_machine, run_machine
from reference.broker import Broker
from spec.profiles import PROFILES


def test_whole_broker_coverage() -> None:
    coverages: dict[str, Coverage] = {}
    for version in sorted(PROFILES):
        coverages[version] = run_machine(lockstep_machine(BENCHES["whole"], PROFILES[version], Broker))
    report = table(coverages)
    print("\n" + report)
    assert all(c.steps > 0 for c in coverages.values()), report
