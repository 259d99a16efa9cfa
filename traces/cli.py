"""The ``flowspec`` command: ``explore`` (the spec by itself, :mod:`properties.explore_command`),
``record`` and ``check`` (traces).

Exit codes of ``check``: 0 every trace conformant; 1 a violation; 2 input that cannot be read or
is not a valid trace; 3 no violation but a trace that could not be judged (inconclusive); 4 the
checker itself failed (:mod:`traces.checking.exits`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from properties import explore_command
from spec.releases import DEFAULT_PROFILE, RELEASES
from traces.checking.exits import EXIT_CHECKER_FAILED, EXIT_INVALID, checker_failure_message, unreadable_input
from traces.checking.partial import WITNESS_SHARES, Budgets
from traces.format.project import project
from traces.format.read import TraceInputError, read_records, validate
from traces.format.records import Observation
from traces.format.storage import first_line
from traces.format.write import TraceWriter
from traces.recording.record import IMPLEMENTATIONS, WORKLOADS, record_workload



def _share(text: str) -> float:
    """A share of a budget: a number from 0 to 1."""
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {value:g}")
    return value

def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``check`` and ``record`` to the ``flowspec`` command line."""
    check = subparsers.add_parser("check", help="validate traces against the spec and its rules (Spark)")
    check.add_argument("paths", nargs="+", metavar="PATH", help="JSON Lines / Parquet files, directories or globs; or URIs (s3://bucket/prefix, hdfs://…)")
    check.add_argument("--profile", choices=RELEASES, help="require every trace to claim this profile")
    check.add_argument("--master", default="local[2]", help="Spark master URL (default local[2])")
    check.add_argument("--report", type=Path, help="write an HTML report here")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.add_argument("--verbose", action="store_true", help="print every trace's table of rules (always for up to 3 traces)")
    check.add_argument("--junit-xml", type=Path, metavar="FILE", help="write JUnit XML: a test case per trace, a failure per violated rule")
    check.add_argument("--no-replay", action="store_true", help="run the rules only")
    check.add_argument("--witness", type=Path, metavar="DIR", help="write, for each conformant trace below 'full', the spec run that explains it, as a full trace")
    check.add_argument("--max-candidates", type=int, default=Budgets().candidates, help="partial replay: candidate states kept after an event (default %(default)s)")
    check.add_argument("--max-steps", type=int, default=Budgets().steps, help="partial replay: spec steps tried per trace (default %(default)s)")
    check.add_argument("--max-seconds", type=float, default=Budgets().seconds, help="partial replay: seconds per trace (default %(default)s)")
    check.add_argument(
        "--witness-share",
        type=_share,
        help=(
            "partial replay: the share of each budget the witness-first search may use before the exhaustive one "
            f"(default by level: {', '.join(f'{level.value} {share:g}' for level, share in WITNESS_SHARES.items())})"
        ),
    )
    check.set_defaults(func=run_check_command)

    proj = subparsers.add_parser("project", help="write traces as a lower observation level would have recorded them")
    proj.add_argument("paths", nargs="+", metavar="PATH", help="JSON Lines / Parquet files, directories or globs")
    proj.add_argument("--level", required=True, choices=[o.value for o in Observation if o is not Observation.FULL])
    proj.add_argument("--out", required=True, help="*.jsonl, or a directory for a Parquet dataset; a path or a URI (s3://…)")
    proj.set_defaults(func=run_project_command)

    record = subparsers.add_parser("record", help="record a workload's trace")
    record.add_argument("--workload", choices=sorted(WORKLOADS), required=True)
    record.add_argument("--events", type=int, default=10_000, help="steps with arrivals (a drain to quiescence follows)")
    record.add_argument("--profile", choices=RELEASES, default=DEFAULT_PROFILE)
    record.add_argument("--out", required=True, help="*.jsonl, or a directory for a Parquet dataset; a path or a URI (s3://…)")
    record.add_argument("--traces", type=int, default=1, help="how many traces (seeds seed, seed+1, …)")
    record.add_argument("--seed", type=int, default=0)
    record.add_argument("--implementation", choices=sorted(IMPLEMENTATIONS), default="reference")
    record.set_defaults(func=run_record_command)


def _invalid(args: argparse.Namespace, heading: str, problems: Sequence[str], located: Sequence[Mapping[str, Any]]) -> int:
    """Report invalid input on stderr, and with ``--json`` also as a JSON document on stdout."""
    print(f"flowspec check: {heading}:", file=sys.stderr)
    for p in problems:
        print(f"  {p}", file=sys.stderr)
    if args.json:
        print(json.dumps({"exit_code": EXIT_INVALID, "invalid_input": list(located)}, indent=2))
    return EXIT_INVALID


def run_check_command(args: argparse.Namespace) -> int:
    """``flowspec check``: a verdict, invalid input, or a failure of the checker, each with its own exit status."""
    from traces.checking.check import WrongProfile

    try:
        return _check(args)
    except WrongProfile as e:
        return _invalid(args, f"traces not of profile {args.profile}", e.problems, e.located)
    except TraceInputError as e:
        return _invalid(args, f"invalid input ({len(e.problems)} file(s))", e.problems, e.located)
    except Exception as e:  # a file a task could not read, or a failure of the checker: never a verdict
        unreadable = unreadable_input(e)
        if unreadable is not None:
            return _invalid(args, "invalid input (1 file(s))", [f"{unreadable['file']}: {unreadable['message']}"], [unreadable])
        message = checker_failure_message(e)
        print(f"flowspec check: the checker failed, no verdict: {message}", file=sys.stderr)
        if args.json:
            print(json.dumps({"exit_code": EXIT_CHECKER_FAILED, "checker_failure": message}, indent=2))
        return EXIT_CHECKER_FAILED


def _check(args: argparse.Namespace) -> int:
    from traces.checking.check import run_check
    from traces.reporting.report import console, to_html, to_json, to_junit_xml
    from traces.checking.session import get_spark

    spark = get_spark(master=args.master)
    budgets = Budgets(args.max_candidates, args.max_steps, args.max_seconds, args.witness_share)
    result = run_check(
        spark,
        args.paths,
        replay=not args.no_replay,
        series=args.report is not None,
        budgets=budgets,
        witness=args.witness,
        progress=sys.stderr.isatty(),
        context=args.report is not None,
        profile=args.profile,
    )
    if args.report is not None:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(to_html(result), encoding="utf-8")
    if args.junit_xml is not None:
        args.junit_xml.parent.mkdir(parents=True, exist_ok=True)
        args.junit_xml.write_text(to_junit_xml(result), encoding="utf-8")
    print(json.dumps(to_json(result), indent=2) if args.json else console(result, verbose=args.verbose))
    return result.exit_code


def run_project_command(args: argparse.Namespace) -> int:
    """``flowspec project``."""
    try:
        validate(args.paths)
        with TraceWriter(args.out) as writer:
            writer.write_all(project((r.data for r in read_records(args.paths)), Observation(args.level)))
    except TraceInputError as e:
        print(f"flowspec project: invalid input ({len(e.problems)} file(s)):", file=sys.stderr)
        for p in e.problems:
            print(f"  {p}", file=sys.stderr)
        return EXIT_INVALID
    except (OSError, pa.ArrowException) as e:
        return _unwritable("project", args.out, e)
    except ValueError as e:
        print(f"flowspec project: {e}", file=sys.stderr)
        return EXIT_INVALID
    print(f"wrote {writer.rows_written} records at level {args.level} to {args.out}")
    return 0


def _unwritable(command: str, out: str, error: Exception) -> int:
    print(f"flowspec {command}: {out}: cannot be written: {first_line(error)}", file=sys.stderr)
    return EXIT_INVALID


def run_record_command(args: argparse.Namespace) -> int:
    """``flowspec record``."""
    try:
        rows = record_workload(args.out, args.workload, args.profile, args.events, args.traces, args.seed, implementation=args.implementation)
    except (OSError, pa.ArrowException) as e:
        return _unwritable("record", args.out, e)
    print(f"wrote {rows} records ({args.traces} trace(s), workload {args.workload}, profile {args.profile}) to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``flowspec`` console script."""
    parser = argparse.ArgumentParser(prog="flowspec", description="RocketMQ broker overload protection: the spec and its checkers")
    subparsers = parser.add_subparsers(dest="command", required=True)
    explore_command.register(subparsers)
    register(subparsers)
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
