"""The spec compiled by mypyc (traces/checking/compiled.py) means what the interpreted spec means.

The replay's workers run the compiled build, so a verdict on Spark is only the spec's verdict if
the compiled modules compute what their source does. These tests run the build in a separate
interpreter (the two cannot share a process: both are the package ``spec``) and compare, field by
field, with the interpreted spec in this process:

- the replay of every example trace and of recorded runs of every workload in every profile,
  including the broken examples and the runs where the spec's own claims break (the divergence,
  its explanation and the rendered state must be the same text);
- the exhaustive exploration of every model in every profile, capped (state and transition
  counts, counterexamples, sometimes-properties and action counts);
- the partial replay of every example projected to ``queues`` and to ``black-box`` (both searches,
  their verdicts, spec steps, details and witnesses), under a budget of spec steps alone, since a
  time budget would end the two at different places.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from properties.explore import explore
from properties.models import MODELS
from spec.releases import PROFILES
from traces.checking.compiled import BUILD, COMPILED, compiled_path, zip_build
from traces.checking.partial import Budgets, replay_partial
from traces.format.project import project
from traces.format.read import raw_records
from traces.format.records import Observation, header_from_record
from traces.recording.examples import EXAMPLES
from traces.format.read import read_records
from traces.recording.record import WORKLOADS, record_workload
from traces.checking.replay import replay_records

#: Explorations are capped so the comparison stays fast; the cap applies to both sides alike.
MAX_STATES = 1500
EVENTS_PER_RECORDING = 400
#: The partial replays' budget: spec steps only (the time budget is out of reach).
PARTIAL_BUDGETS = Budgets(steps=20_000, seconds=1e9)

#: Run in the compiled build: prove the modules are the compiled ones, then print the results.
_COMPILED_RUN = """
import importlib, json, sys
from traces.checking.compiled import COMPILED
for name in COMPILED:
    module = importlib.import_module(name.removesuffix(".py").replace("/", "."))
    assert module.__file__.endswith(".so"), f"{name} is not compiled: {module.__file__}"
sys.path.insert(0, sys.argv[1])
from test_compiled import replay_results, explorations, partial_results
print(json.dumps({"replay": replay_results(sys.argv[3:]), "explore": explorations(int(sys.argv[2])), "partial": partial_results()}))
"""


def replay_results(paths: list[str]) -> list[dict[str, Any]]:
    """Every trace's replay result, as JSON data."""
    results = [dataclasses.asdict(r) for path in paths for r in replay_records(rec.data for rec in read_records([path]))]
    return list(json.loads(json.dumps(results)))


def partial_results() -> dict[str, Any]:
    """The partial replay of every example projected to each level below ``full``, as plain data."""
    out: dict[str, Any] = {}
    for path in sorted(EXAMPLES.glob("*.jsonl")):
        for level in (Observation.QUEUES, Observation.BLACK_BOX):
            records = list(project((r for _, r in raw_records(path)), level))
            result = replay_partial(header_from_record(records[0]), records[1:], PARTIAL_BUDGETS)
            out[f"{path.stem} {level.value}"] = json.loads(json.dumps(dataclasses.asdict(result), default=str))
    return out


def explorations(max_states: int) -> dict[str, Any]:
    """Every model in every profile explored (capped), as plain data without timings."""
    out: dict[str, Any] = {}
    for version, profile in sorted(PROFILES.items()):
        for name, build in sorted(MODELS.items()):
            model = build(profile)
            found = dataclasses.asdict(explore(model.config, model.env, max_states=max_states))
            found.pop("seconds")
            out[f"{name} {version}"] = json.loads(json.dumps(found, default=str))
    return out


@pytest.fixture(scope="module")
def compiled() -> Path:
    path, why = compiled_path()
    assert path is not None, why
    return path


def test_the_build_compiles_the_spec_and_the_replayer(compiled: Path) -> None:
    assert {"spec/machine.py", "traces/checking/replay.py", "traces/checking/partial.py", "traces/checking/witness.py", "traces/checking/reduction.py"} <= set(COMPILED)
    for name in COMPILED:
        extensions = list((compiled / name).parent.glob(Path(name).stem + ".cpython-*.so"))
        assert len(extensions) == 1, f"no compiled module for {name} in {compiled}"


def test_builds_zipped_at_once_leave_one_whole_zip_and_no_earlier_one(tmp_path: Path) -> None:
    """pytest's two workers may each start Spark, and each zips the build for the executors. A
    clean-clone CI run failed when one removed the zips of earlier builds, the other's half
    written zip among them, before the other moved it into place. Eight zips made at once, with
    an earlier build's zip and another process's staging file beside them: the zip is whole, the
    earlier one is gone, and the staging file is left alone."""
    build = tmp_path / "compiled-spec"
    (build / "spec").mkdir(parents=True)
    (build / "spec" / "machine.py").write_text("x = 1\n")
    zipped = tmp_path / "compiled-spec-0123456789abcdef.zip"
    (tmp_path / "compiled-spec-fedcba9876543210.zip").write_bytes(b"an earlier build")
    theirs = tmp_path / ".compiled-spec-0123456789abcdef-another.zip"
    theirs.write_bytes(b"another process's zip in the making")
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda _: zip_build(build, zipped), range(8)))
    with zipfile.ZipFile(zipped) as z:
        assert z.read("spec/machine.py") == b"x = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([build.name, zipped.name, theirs.name])


@pytest.mark.slow
def test_the_compiled_spec_replays_and_explores_as_the_interpreted_spec(compiled: Path, tmp_path: Path) -> None:
    paths = sorted(str(p) for p in EXAMPLES.glob("*.jsonl"))
    for i, workload in enumerate(sorted(WORKLOADS)):
        for version in sorted(PROFILES):
            recorded = tmp_path / f"{workload}-{version}.jsonl"
            record_workload(recorded, workload, version, EVENTS_PER_RECORDING, seed=i)
            paths.append(str(recorded))
    env = {**os.environ, "PYTHONPATH": str(compiled), "PYTHONSAFEPATH": "1"}
    # The compiled build runs in a child process while this one runs the interpreted spec: on two
    # cores, side by side.
    with subprocess.Popen(
        [sys.executable, "-c", _COMPILED_RUN, str(Path(__file__).parent), str(MAX_STATES), *paths],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        ours: dict[str, Any] = {"replay": replay_results(paths), "explore": explorations(MAX_STATES), "partial": partial_results()}
        out, err = child.communicate()
    assert child.returncode == 0, err[-3000:]
    theirs = json.loads(out)
    assert len(ours["replay"]) == len(paths) and {r["verdict"] for r in ours["replay"]} >= {"conformant", "violation"}
    for mine, other in zip(ours["replay"], theirs["replay"], strict=True):
        assert mine == other, f"trace {mine['trace_id']}: interpreted {mine} but compiled {other}"
    assert ours["explore"] == theirs["explore"]
    assert {r["verdict"] for r in ours["partial"].values()} >= {"conformant", "violation"}
    for name, mine in ours["partial"].items():
        assert mine == theirs["partial"][name], f"{name}: interpreted {mine} but compiled {theirs['partial'][name]}"
