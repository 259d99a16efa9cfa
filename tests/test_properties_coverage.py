"""The coverage table of the whole-broker lockstep machine, one column per profile (print with -s),
and what any budget of it must reach: a full queue and its [OVERLOAD] answer in every profile, and
the stuck beginTimeInLock exactly in the profiles whose CommitLog does not reset it in finally."""

from __future__ import annotations

from properties.benches import BENCHES
from properties.coverage import table
from properties.lockstep import Coverage
from properties.machines import lockstep_machine, run_machine
from reference.broker import Broker
from spec.releases import PROFILES


def test_whole_broker_coverage() -> None:
    coverages: dict[str, Coverage] = {}
    for version in sorted(PROFILES):
        coverages[version] = run_machine(lockstep_machine(BENCHES["whole"], PROFILES[version], Broker))
    report = table(coverages)
    print("\n" + report)
    for version, c in coverages.items():
        assert c.sometimes["a_queue_can_fill"] and c.sometimes["a_overload_answer_can_be_written"], f"{version}\n{report}"
        stuck = c.spec_breaks["begin_time_is_zero_when_lock_is_free"] > 0
        assert stuck == (not PROFILES[version].begin_time_reset_in_finally), f"{version}\n{report}"
