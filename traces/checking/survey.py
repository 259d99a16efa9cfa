"""A survey of the partial replay, in one process: what it finds in recorded workloads and in the
broken examples, projected to a level, with each search's size and speed.

``python -m traces.checking.survey --level black-box --events 300`` records every workload under
each profile (the reference broker, seed 0), projects it and searches it, checking each witness
with the ordinary replay; ``--broken`` searches the broken examples instead. The figures in
docs/trace-format.md ("The partial replay") come from it. Timings are of one process on a shared
machine: compare them side by side in one run; speed goals live in ``make bench``.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
import tracemalloc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec.invariants import known_defects
from traces.checking.partial import Budgets, PartialResult, replay_partial, witness_records
from traces.checking.replay import replay_records
from traces.format.project import project
from traces.format.read import raw_records
from traces.format.records import Observation, header_from_record
from traces.recording.examples import EXAMPLES
from traces.recording.record import WORKLOADS, record_workload


def witness_accepted(projected: Sequence[dict[str, Any]], result: PartialResult) -> bool:
    """Whether the ordinary replay follows the witness to its end, breaking only claims the profile's own code breaks."""
    header = header_from_record(projected[0])
    (replayed,) = replay_records(witness_records(header, result))
    if replayed.divergence is None:
        return True
    return replayed.divergence.kind == "claim broken" and set(replayed.divergence.observed.split(", ")) <= known_defects(header.config.profile)


@dataclass
class Tally:
    """What the searched traces add up to: how many were conformant with an accepted witness, and
    the events, time and spec steps of those."""

    traces: int = 0
    explained: int = 0
    events: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's CPU time: steadier than wall time on a shared machine
    steps: int = 0

    def line(self) -> str:
        rate = self.events / max(self.seconds, 1e-9)
        cpu_rate = self.events / max(self.cpu_seconds, 1e-9)
        per_event = self.steps / max(self.events, 1)
        return (
            f"{self.explained} of {self.traces} conformant with an accepted witness; over those, {self.events:,} events"
            f" in {self.seconds:.2f} s: {rate:,.0f} events/s ({cpu_rate:,.0f} a CPU second), {per_event:,.0f} spec steps an event"
        )


def survey(name: str, records: Sequence[dict[str, Any]], level: Observation, budgets: Budgets, tally: Tally, peak_memory: bool = False) -> str:
    """One line: the search of ``records`` projected to ``level`` (added to ``tally``); with
    ``peak_memory``, the most memory the search held at once (tracemalloc, which slows it)."""
    projected = list(project(records, level))
    if peak_memory:
        tracemalloc.start()
    started, cpu_started = time.monotonic(), time.process_time()
    result = replay_partial(header_from_record(projected[0]), projected[1:], budgets)
    seconds, cpu_seconds = time.monotonic() - started, time.process_time() - cpu_started
    memory = ""
    if peak_memory:
        memory = f", peak {tracemalloc.get_traced_memory()[1] / 1e6:,.1f} MB traced"
        tracemalloc.stop()
    events = len(projected) - 1
    accepted = result.verdict == "conformant" and witness_accepted(projected, result)
    checked = "" if result.verdict != "conformant" else "; witness accepted" if accepted else "; WITNESS REFUSED"
    tally.traces += 1
    if accepted:
        tally.explained += 1
        tally.events += events
        tally.seconds += seconds
        tally.cpu_seconds += cpu_seconds
        tally.steps += result.steps
    why = f"; {result.detail[:200]}" if result.verdict != "conformant" else ""
    return (
        f"{name:34} {events:6} events  {result.verdict:12} {seconds:7.2f} s {events / max(seconds, 1e-9):9.0f} events/s"
        f"  states median {result.median_candidates:g} max {result.max_candidates}, {result.steps:,} spec steps{memory}{checked}{why}"
    )


def traces_surveyed(broken: bool, profiles: Sequence[str], workloads: Sequence[str], steps: int) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(name, records) of each broken example, or of each workload recorded under each profile
    (the reference broker, seed 0; each recording lives until the next is asked for)."""
    if broken:
        yield from ((path.stem.removeprefix("broken-"), [r for _, r in raw_records(path)]) for path in sorted(EXAMPLES.glob("broken-*.jsonl")))
        return
    with tempfile.TemporaryDirectory() as tmp:
        for profile, workload in itertools.product(profiles, workloads):
            out = Path(tmp) / f"{workload}-{profile}.jsonl"
            record_workload(out, workload, profile, steps)
            yield f"{workload} {profile}", [r for _, r in raw_records(out)]


def arguments(prog: str, doc: str, level: str, events: int, profiles: str) -> argparse.ArgumentParser:
    """The options both surveys take, with their defaults: which traces, at which level, and the time budget."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    parser.add_argument("--level", choices=["queues", "black-box"], default=level)
    parser.add_argument("--events", type=int, default=events, help="steps of each recording")
    parser.add_argument("--profiles", default=profiles)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--broken", action="store_true", help="search the broken examples instead of recordings")
    parser.add_argument("--max-seconds", type=float, default=Budgets().seconds, help="a trace (for each search, where there are two)")
    parser.add_argument(
        "--max-steps", type=int, default=Budgets().steps, help="spec steps a trace: a budget the machine's load does not move, for comparing searches"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    parser = arguments("python -m traces.checking.survey", __doc__, "black-box", 300, "4.3.2,4.9.8,5.3.3")
    parser.add_argument("--witness-share", type=float, help="of the budget, what the witness-first search may use first (1: it alone; default by level, Budgets.share)")
    parser.add_argument("--peak-memory", action="store_true", help="trace each search's allocations and print its peak (slower)")
    args = parser.parse_args(argv)
    level = Observation(args.level)
    budgets = Budgets(steps=args.max_steps, seconds=args.max_seconds, witness_share=args.witness_share)
    tally = Tally()
    for name, records in traces_surveyed(args.broken, args.profiles.split(","), args.workloads.split(","), args.events):
        print(survey(name, records, level, budgets, tally, args.peak_memory), flush=True)
    print(tally.line())


if __name__ == "__main__":
    main()
