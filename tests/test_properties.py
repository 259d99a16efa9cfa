"""The lockstep property suites: every bench's machine against the reference broker, for every profile.

Each run drives the spec and ``reference.broker.Broker`` through the same actions and checks, after
every step, the claims, the action taken and the whole observed state (:mod:`properties.lockstep`).
Budget: the loaded Hypothesis profile (tests/conftest.py).
"""

from __future__ import annotations

import pytest

from properties.benches import BENCHES
from properties.lockstep import LockstepFailure, LockstepRun
from spec.actors import IoThreadId, WorkerId
from properties.machines import lockstep_machine, run_machine
from properties.mutants import ResetMissingOnExceptionPath
from reference.broker import Broker
from spec.remoting import RequestArrives
from spec.workers import WorkerThrowsInsideLock
from spec.codes import RequestCode
from spec.profiles import ExecutorName
from spec.releases import PROFILES


@pytest.mark.parametrize("version", sorted(PROFILES))
@pytest.mark.parametrize("bench", sorted(BENCHES))
def test_reference_refines_the_spec(bench: str, version: str) -> None:
    coverage = run_machine(lockstep_machine(BENCHES[bench], PROFILES[version], Broker))
    assert coverage.steps > 0, f"the {bench} machine took no step under {version}"


def test_a_discrepancy_names_the_claim_and_prints_the_step_table() -> None:
    config = BENCHES["lock"].configs(PROFILES["4.9.8"])[0]
    run = LockstepRun(config, Broker.with_part(ResetMissingOnExceptionPath), BENCHES["lock"].env)
    run.take(RequestArrives(0, RequestCode.SEND_MESSAGE, "TopicA", False))
    while run.spec.lock.holder is None:
        io_step = run.spec_step_of(IoThreadId(0))
        run.step(IoThreadId(0) if io_step is not None else WorkerId(ExecutorName.SEND, 0))
    with pytest.raises(LockstepFailure) as caught:
        run.take(WorkerThrowsInsideLock(ExecutorName.SEND, 0))
    message = str(caught.value)
    assert caught.value.check == "begin_time_is_zero_when_lock_is_free"
    assert "expected (spec):      holder=free begin=0" in message
    assert "actual (reference):   holder=free begin=" in message
    assert "step | action | changed (before -> after)" in message
    assert "WorkerThrowsInsideLock(executor=SEND, worker=0)" in message
