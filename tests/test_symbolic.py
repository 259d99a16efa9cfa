"""CrossHair on the spec's contracts: it reports every planted bug, and the real contracts hold.

Each test that runs CrossHair starts one ``crosshair check`` process, through
properties.symbolic's own ``analyse`` (its command, its verdicts, its second try after a VACUOUS
verdict), with short per-condition timeouts.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path

import pytest

from properties import symbolic
from properties.symbolic import DEFAULT_MODULES, Result, Verdict, contract_functions, judge, main

REPO = Path(__file__).resolve().parents[1]

#: Each planted module and the function in it whose contract CrossHair must break.
PLANTED = {
    "tests.planted.putlock_bug": "release_after_put",
    "tests.planted.storepool_bug": "return_buffer",
    "tests.planted.stuck_lock": "check_worker_throws_inside_lock",
}


#: The wall-clock seconds one test's CrossHair run may take, both tries (:func:`crosshair`).
BUDGET = 600


def crosshair(targets: list[str], per_condition_timeout: float, monkeypatch: pytest.MonkeyPatch) -> Result:
    """Run ``crosshair check`` from the repository root through :func:`properties.symbolic.analyse`,
    which tries a VACUOUS verdict once more with more time per condition: the test suite's two
    workers share the machine's two cores, and a loaded machine can leave a precondition unmet in
    its time. The result's details are CrossHair's messages other than confirmations."""
    monkeypatch.chdir(REPO)  # the planted modules import as ``tests.planted``
    return symbolic.analyse(targets, per_condition_timeout, time.monotonic() + BUDGET)


def test_crosshair_reports_a_counterexample_for_each_planted_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    result = crosshair(list(PLANTED), 2, monkeypatch)
    said = "\n".join(result.details)
    assert result.verdict is Verdict.COUNTEREXAMPLE, f"expected COUNTEREXAMPLE, got {result.verdict.value}:\n{said}"
    for module, function in PLANTED.items():
        path = module.replace(".", "/") + ".py"
        reported = [line for line in result.details if path in line and f": error: false when calling {function}(" in line]
        assert reported, f"expected a counterexample to {module}.{function}, CrossHair said:\n{said}"


def postconditions(qualname: str) -> int:
    """How many ``post:`` lines the docstring of a function carries: CrossHair reports on each."""
    module, _, name = qualname.rpartition(".")
    doc = getattr(importlib.import_module(module), name).__doc__ or ""
    return sum(line.strip().startswith("post:") for line in doc.splitlines())


def test_the_component_contracts_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    modules = ["spec.putlock", "spec.storepool", "spec.fastfailure"]
    # 4 s per condition: with 1 s, a machine at load average 3 sometimes ended with VACUOUS (a
    # precondition not yet satisfied on any path), though the same run passes on an idle machine;
    # with 2 s, a clean-clone CI run on a slow day did too (storepool's return_committed_buffer, whose four
    # preconditions on a list of files CrossHair had not met once in its 2 s).
    result = crosshair(modules, 4, monkeypatch)
    said = "\n".join(result.details)
    assert result.verdict.passed, f"expected every contract to hold, got {result.verdict.value}:\n{said}"
    expected = sum(postconditions(f) for m in modules for f in contract_functions(m))
    assert result.conditions == expected, f"expected {expected} conditions analysed, got {result.conditions}:\n{said}"


def test_the_action_contract_that_stuck_lock_weakens_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """check_worker_throws_inside_lock with its profile precondition: no counterexample, precondition met."""
    result = crosshair(["properties.symbolic.check_worker_throws_inside_lock"], 3, monkeypatch)
    said = "\n".join(result.details)
    assert result.verdict.passed, f"expected the contract to hold, got {result.verdict.value}:\n{said}"
    assert result.conditions == 1, f"expected 1 condition analysed, got {result.conditions}:\n{said}"


def test_every_action_contract_and_every_component_contract_is_in_the_default_run() -> None:
    found = {name for module in DEFAULT_MODULES for name in contract_functions(module)}
    expected = {
        "spec.putlock." + f
        for f in ("is_os_page_cache_busy", "acquire_for_put", "release_after_put", "throw_inside_lock")
        + ("acquire_for_ha", "release_for_ha")
    }
    expected |= {
        "spec.storepool." + f
        for f in ("remain_transient_store_buffer_nums", "is_transient_store_pool_deficient", "borrow_buffer")
        + ("return_buffer", "create_mapped_file", "append_message", "commit_file", "return_committed_buffer")
    }
    expected |= {"spec.fastfailure.is_expired"}
    expected |= {
        "properties.symbolic.check_" + action
        for action in ("worker_acquires_put_lock", "worker_appends_and_unlocks", "worker_throws_inside_lock")
        + ("ha_service_acquires_put_lock", "ha_service_releases_put_lock", "worker_creates_mapped_file")
        + ("commit_service_commits", "commit_service_returns_buffer", "worker_takes_task")
        + ("fast_failure_starts_run", "fast_failure_skips_run", "fast_failure_drains_busy_send_queue")
        + ("fast_failure_ends_busy_drain", "fast_failure_cleans_expired_head", "fast_failure_stops_at_head")
        + ("request_arrives", "dispatch_rejects_request", "dispatch_creates_task", "dispatch_starts_worker")
        + ("dispatch_queues_task", "dispatch_rejects_overload")
    }
    assert found == expected, f"missing {sorted(expected - found)}, unexpected {sorted(found - expected)}"


def test_the_runner_prints_one_line_per_function_and_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spec.fastfailure", "--per-condition-timeout", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["spec.fastfailure.is_expired", "proved"], lines
    assert lines[-1].startswith("symbolic: 1 function: 1 proved; passed in "), lines


@pytest.mark.parametrize(
    ("returncode", "stdout", "verdict"),
    [
        (0, "m.py:3: info: Confirmed over all paths.\nm.py:9: info: Confirmed over all paths.\n", Verdict.PROVED),
        (0, "m.py:3: info: Confirmed over all paths.\nm.py:9: info: Not confirmed.\n", Verdict.NO_COUNTEREXAMPLE),
        (0, "m.py:3: info: Unable to meet precondition.\n", Verdict.VACUOUS),
        (1, "m.py:3: error: false when calling f(1) (which returns 2)\n", Verdict.COUNTEREXAMPLE),
        (2, "", Verdict.ERROR),
        (0, "", Verdict.ERROR),
    ],
    ids=["proved", "bounded", "vacuous", "counterexample", "crashed", "nothing-checked"],
)
def test_the_verdict_follows_the_exit_status_and_the_messages(returncode: int, stdout: str, verdict: Verdict) -> None:
    result = judge("m.f", returncode, stdout, "", 0.0)
    assert result.verdict is verdict, f"expected {verdict}, got {result.verdict}"


@pytest.mark.parametrize(("second", "verdict"), [(Verdict.NO_COUNTEREXAMPLE, Verdict.NO_COUNTEREXAMPLE), (Verdict.VACUOUS, Verdict.VACUOUS)], ids=["met-later", "never-met"])
def test_a_vacuous_verdict_is_tried_again_with_more_time(monkeypatch: pytest.MonkeyPatch, second: Verdict, verdict: Verdict) -> None:
    """CrossHair's "Unable to meet precondition" can mean its search ran out of time: a VACUOUS
    function is analysed once more with four times the time per condition, and the second try's
    verdict stands (VACUOUS again fails the run). Other verdicts are not tried again."""
    tries: list[float] = []

    def once(targets: list[str], per_condition_timeout: float, deadline: float) -> Result:
        tries.append(per_condition_timeout)
        return Result(" ".join(targets), Verdict.VACUOUS if len(tries) == 1 else second, 1, 1.5, ())

    monkeypatch.setattr(symbolic, "analyse_once", once)
    result = symbolic.analyse(["m.f"], 3.0, time.monotonic() + 60)
    assert (result.verdict, tries, result.seconds) == (verdict, [3.0, 12.0], 3.0)
    assert result.details[0].startswith("VACUOUS at --per_condition_timeout=3; tried again at 12")
    tries.clear()

    def proved(targets: list[str], per_condition_timeout: float, deadline: float) -> Result:
        tries.append(per_condition_timeout)
        return Result(" ".join(targets), Verdict.PROVED, 1, 1.0, ())

    monkeypatch.setattr(symbolic, "analyse_once", proved)
    assert (symbolic.analyse(["m.f"], 3.0, time.monotonic() + 60).verdict, tries) == (Verdict.PROVED, [3.0])
