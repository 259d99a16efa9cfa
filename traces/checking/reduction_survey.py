"""Measures the reduction of the exhaustive search (:mod:`traces.checking.reduction`): the
reduced and the unreduced search side by side, on the same trace, in one process.

``python -m traces.checking.reduction_survey --level queues --events 1000 --profiles 5.3.3``
records each workload (the reference broker, seed 0), projects it, and runs the exhaustive
search alone (no witness-first search) with and without the reduction, printing each one's
verdict, spec steps per event, candidate sizes and time; ``--broken`` searches the broken
examples instead. The figures in docs/trace-format.md ("The reduction") come from it. Timings
are of one shared machine: compare the two columns of one run, not runs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from traces.checking.partial import Budgets, PartialReplay, decide
from traces.checking.reduction import Reduction
from traces.format.project import project
from traces.format.records import Observation, header_from_record
from traces.checking.survey import arguments, traces_surveyed


def side_by_side(name: str, records: Sequence[dict[str, Any]], level: Observation, budgets: Budgets) -> str:
    """One line: the exhaustive search of ``records`` projected to ``level``, unreduced then reduced."""
    projected = list(project(records, level))
    header, events = header_from_record(projected[0]), projected[1:]
    line = f"{name:34} {len(events):5} events"
    for reduce in (False, True):
        reduction = Reduction(header.config, level, events) if reduce else None
        started = time.monotonic()
        result = decide(PartialReplay(header, budgets, reduction), events)
        seconds = time.monotonic() - started
        where = f" at seq {result.detail.split()[1].rstrip(':')}" if result.verdict != "conformant" and result.detail.startswith("seq ") else ""
        line += (
            f" | {'reduced' if reduce else 'unreduced'}: {result.verdict}{where}, {result.steps:,} steps"
            f" ({result.steps / max(result.events, 1):.0f}/event), states median {result.median_candidates:g} max {result.max_candidates}, {seconds:.2f} s"
        )
    return line


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments("python -m traces.checking.reduction_survey", __doc__, "queues", 1000, "5.3.3").parse_args(argv)
    budgets = Budgets(steps=args.max_steps, seconds=args.max_seconds)
    for name, records in traces_surveyed(args.broken, args.profiles.split(","), args.workloads.split(","), args.events):
        print(side_by_side(name, records, Observation(args.level), budgets), flush=True)


if __name__ == "__main__":
    main()
