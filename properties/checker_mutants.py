"""Mutation testing of the trace checker: every mutant of its judging code is killed by a test or argued equivalent.

The reference mutants (:mod:`properties.mutants`) test the *spec's* claims against wrong brokers;
these test the *checker's* tests against a wrong checker. mutmut (3.x, configured in
``[tool.mutmut]`` of pyproject.toml) rewrites the checker's functions one small change at a time
(a comparison flipped, a constant moved by one, an argument dropped, a string changed) and runs,
against each mutant, the Spark-free tests that call the mutated function, in a process forked
from one that has imported everything. A mutant no test fails is a *survivor*: a rule's
condition, a validation check or a verdict that the tests do not hold.

The checker is mutated in four scopes (:data:`SCOPES`), each with the tests that judge it:

- ``rules``: the scan rules and the frame rules' predicates (traces/checking/scan.py, rules.py);
- ``validation``: reading and checking records (traces/format/read.py, records.py);
- ``verdicts``: the replays' verdicts (traces/checking/replay.py, partial.py);
- ``wire``: what the wire alone rules out (traces/checking/necessary.py).

The gate (``python -m properties.checker_mutants SCOPE...``): every mutant of the scopes is killed
(a test failed or it ran out of time), or is listed in :data:`ALLOWLIST` with the reason it cannot
be killed. An entry names the function, the original line and the mutated line (indentation
stripped), not mutmut's mutant number or a line number, so it stays valid when code moves or other
lines of the function change; an entry that matches no surviving mutant any more (its line changed,
or a test now kills it) fails the gate too, so the list cannot rot. Each run is staged afresh in
``mutants/`` (:func:`stage`); mutmut's own cache is not used.

``make mutants`` (CI) runs ``--ci``: rules.py and the functions of scan.py in :data:`CI_FUNCTIONS` (all of
them), 1,910 mutants in about 12 min here with two at once beside other sessions' work (docs/checker-mutants.md).
``make mutants-deep`` runs every scope; the survivors it still reports are listed in docs/checker-mutants.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The survivors argued equivalent, with the reason each is.
ALLOWLIST = ROOT / "docs" / "checker-mutants.toml"
#: Where a run is staged (traces/, tests/, docs/ and a pyproject.toml naming the scope's files and
#: tests); mutmut's own work directory is ``mutants/mutants``. Ignored by git, removed by ``make clean``.
STAGE = ROOT / "mutants"


@dataclass(frozen=True)
class Scope:
    """A part of the checker: the modules mutated and the Spark-free tests that judge them."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]

    @property
    def patterns(self) -> tuple[str, ...]:
        """mutmut's mutant names of the modules (module.x_function or module.xǁClassǁmethod)."""
        return tuple(m.removesuffix(".py").replace("/", ".") + ".*" for m in self.modules)


_RULE_TESTS = ("tests/test_traces_rule_details.py", "tests/test_traces_rule_conditions.py",
               "tests/test_traces_rules.py", "tests/test_traces_scan.py")
SCOPES: dict[str, Scope] = {
    "rules": Scope(("traces/checking/scan.py", "traces/checking/rules.py"), _RULE_TESTS),
    "validation": Scope(("traces/format/read.py", "traces/format/records.py"),
                        ("tests/test_traces_read.py", "tests/test_traces_badinput.py", "tests/test_trace_schema.py",
                         "tests/test_traces_replay.py", "tests/test_traces_records.py", "tests/test_traces_segments.py")),
    "verdicts": Scope(("traces/checking/replay.py", "traces/checking/partial.py"),
                      ("tests/test_traces_replay.py", "tests/test_traces_partial.py", "tests/test_traces_segments.py")),
    "wire": Scope(("traces/checking/necessary.py",), ("tests/test_traces_necessary.py",)),
}
#: What ``make mutants`` runs in CI, within its time (docs/checker-mutants.md): rules.py whole, and
#: every function of scan.py (each mutant killed or argued equivalent): the scan rules, request lookup
#: and routing, the column helpers. Listed by name, so that a new function joins the gate only once its
#: mutants have been judged (``python -m properties.checker_mutants rules --only ...``).
CI_FUNCTIONS = (
    "traces.checking.rules.*",
    *(f"traces.checking.scan.{f}__mutmut_*" for f in (
        "x__at_or_before", "x_scan_trace", "xǁEventsǁslice", "xǁFindingǁadd", "xǁFindingǁone", "xǁTraceScanǁ_is",
        "xǁTraceScanǁ_queue_name", "xǁTraceScanǁ_worker_name", "xǁTraceScanǁkind_of", "xǁTraceScanǁ_route",
        "xǁTraceScanǁ_fast_failure", "xǁTraceScanǁ_busy_answers", "xǁTraceScanǁ_lock", "xǁTraceScanǁ_queues",
        "xǁTraceScanǁ_limiter", "xǁTraceScanǁ_limiter_topic", "xǁTraceScanǁ_workers", "xǁTraceScanǁ_answers",
        "xǁTraceScanǁ_pool", "xǁTraceScanǁ_requests", "xǁTraceScanǁ_request_of", "xǁTraceScanǁ_timeouts",
        "xǁTraceScanǁ_remark",
        # The column helpers and the scan's set-up: with these, every function of scan.py.
        "xǁTraceScanǁ__init__", "xǁTraceScanǁ_executor_ids", "xǁTraceScanǁ_holder", "xǁTraceScanǁ_executor_name", "xǁTraceScanǁ_queue_id",
        "x__latest_before", "x__codes", "x__ints", "x__valid", "x__kind_mask", "xǁEventsǁof", "xǁEventsǁ__len__",
        "xǁRemarksǁof", "xǁRemarksǁclean_queue")),
)
CI_SCOPE = Scope(SCOPES["rules"].modules, _RULE_TESTS)
#: mutmut's statuses that mean a mutant was caught.
CAUGHT = {"killed", "caught by type check", "timeout", "segfault"}
_RESULT = re.compile(r"^\s+(?P<name>\S+): (?P<status>.+)$")


@dataclass(frozen=True)
class Mutant:
    """One mutant mutmut made: its name, status and the change it made."""

    name: str  # mutmut's, e.g. traces.checking.scan.xǁTraceScanǁ_answers__mutmut_12
    status: str  # mutmut's: killed, survived, no tests, timeout, ...

    @property
    def module(self) -> str:
        return self.name.rsplit(".", 1)[0]

    @property
    def function(self) -> str:
        """The mutated function as module.Class.method or module.function."""
        generated = self.name[len(self.module) + 1 :].rsplit("__mutmut_", 1)[0]
        if generated.startswith("xǁ"):
            _, cls, method = generated.split("ǁ")
            return f"{self.module}.{cls}.{method}"
        return f"{self.module}.{generated.removeprefix('x_')}"

    @property
    def path(self) -> str:
        return self.module.replace(".", "/") + ".py"


@dataclass(frozen=True)
class Change:
    """What a mutant changed: the original and the mutated lines, indentation stripped."""

    function: str
    original: str
    mutated: str


def change_of(mutant: Mutant) -> Change:
    """The mutant's change, read from the diff mutmut shows for it."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    with contextlib.chdir(STAGE):
        diff = get_diff_for_mutant(mutant.name, path=mutant.path).splitlines()
    removed = [line[1:].strip() for line in diff if line.startswith("-") and not line.startswith("---")]
    added = [line[1:].strip() for line in diff if line.startswith("+") and not line.startswith("+++")]
    return Change(mutant.function, "\n".join(removed), "\n".join(added))


@dataclass(frozen=True)
class Entry:
    """One allowlisted survivor and the reason it cannot be killed."""

    change: Change
    why: str


def load_allowlist(path: Path = ALLOWLIST) -> list[Entry]:
    """The entries of the allowlist; an entry without a reason is refused."""
    data = tomllib.loads(path.read_text())
    entries = []
    for i, e in enumerate(data.get("equivalent", []), 1):
        missing = {"function", "original", "mutated", "why"} - set(e)
        if missing or not str(e.get("why", "")).strip():
            raise SystemExit(f"{path}: entry {i} ({e.get('function', '?')}) lacks {sorted(missing) or ['a reason (why)']}")
        entries.append(Entry(Change(e["function"], e["original"].strip(), e["mutated"].strip()), e["why"]))
    return entries


def _toml(value: object) -> str:
    """A value of the staged pyproject.toml: strings, booleans, numbers and lists of them are written
    as JSON, which TOML reads the same."""
    return json.dumps(value)


def stage(scope: Scope) -> Path:
    """A fresh staging directory for ``scope``: copies of traces/, tests/ and docs/, and a pyproject.toml
    holding pytest's settings and ``[tool.mutmut]`` with the scope's modules and tests. mutmut runs
    every test it is given once clean and once to map tests to functions before any mutant; giving it
    only the scope's tests keeps that from costing minutes (the partial replay's take ~100 s)."""
    shutil.rmtree(STAGE, ignore_errors=True)
    STAGE.mkdir()
    for folder in ("traces", "tests", "docs"):
        shutil.copytree(ROOT / folder, STAGE / folder, ignore=shutil.ignore_patterns("__pycache__"))
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    mutmut = {**tool["mutmut"], "only_mutate": list(scope.modules), "pytest_add_cli_args_test_selection": list(scope.tests)}
    tables = {"tool.pytest.ini_options": tool["pytest"]["ini_options"], "tool.mutmut": mutmut}
    (STAGE / "pyproject.toml").write_text("".join(
        f"[{name}]\n" + "".join(f"{key} = {_toml(value)}\n" for key, value in table.items()) + "\n"
        for name, table in tables.items()))
    return STAGE


def _mutmut(*args: str, log: Path | None = None) -> str:
    """Run mutmut in the staging directory, with the venv's tools (pytest) first on PATH."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [str(bin_dir / "mutmut"), *args]
    if log is None:
        return subprocess.run(command, cwd=STAGE, env=env, check=True, capture_output=True, text=True).stdout
    with log.open("w") as out:
        done = subprocess.run(command, cwd=STAGE, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        sys.stdout.write(log.read_text()[-4000:])
        raise SystemExit(f"mutmut {' '.join(args)} failed (exit {done.returncode}); its output is in {log}")
    return ""


def run(scope: Scope, patterns: list[str], children: int) -> list[Mutant]:
    """Mutate ``scope``'s modules from scratch and run its tests against each mutant whose name matches
    a pattern; those mutants with their status."""
    stage(scope)
    _mutmut("run", "--max-children", str(children), *patterns, log=STAGE / "run.log")
    results = _mutmut("results", "--all", "true")
    mutants = [Mutant(m["name"], m["status"]) for line in results.splitlines() if (m := _RESULT.match(line))]
    return [m for m in mutants if any(fnmatch(m.name, p) for p in patterns)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scopes", nargs="*", help=f"any of {', '.join(SCOPES)} (default: all)")
    parser.add_argument("--ci", action="store_true", help="only the mutants CI runs (CI_FUNCTIONS: rules.py and part of scan.py)")
    parser.add_argument("--only", action="append", metavar="GLOB",
                        help="only the scopes' mutants whose mutmut name matches, e.g. 'traces.checking.scan.xǁTraceScanǁ_timeouts*'")
    parser.add_argument("--children", type=int, default=os.cpu_count() or 2, help="mutants run at once")
    args = parser.parse_args(argv)
    if unknown := set(args.scopes) - set(SCOPES):
        parser.error(f"unknown scope {sorted(unknown)}: the scopes are {', '.join(SCOPES)}")
    chosen = [SCOPES[name] for name in args.scopes or SCOPES]
    scope = Scope(tuple(dict.fromkeys(m for c in chosen for m in c.modules)), tuple(dict.fromkeys(t for c in chosen for t in c.tests)))
    patterns = list(scope.patterns)
    if args.ci:
        scope, patterns = CI_SCOPE, list(CI_FUNCTIONS)
    if args.only:
        patterns = [p for p in args.only if any(fnmatch(p, s) for s in patterns)]
        if not patterns:
            parser.error(f"--only {args.only} names no mutants of the scopes {', '.join(scope.modules)}")
    allowed = load_allowlist()
    start = time.monotonic()
    mutants = run(scope, patterns, args.children)
    seconds = time.monotonic() - start
    counts: Counter[tuple[str, str]] = Counter()
    unexplained: list[tuple[Mutant, Change]] = []
    used: set[Change] = set()
    by_change = {e.change: e for e in allowed}
    for m in mutants:
        name = next(s for s in SCOPES if any(fnmatch(m.name, p) for p in SCOPES[s].patterns))
        if m.status in CAUGHT:
            counts[name, "caught"] += 1
            continue
        change = change_of(m)
        if m.status == "survived" and change in by_change:
            used.add(change)
            counts[name, "equivalent"] += 1
        else:
            unexplained.append((m, change))
            counts[name, "left"] += 1
    print(f"{'scope':<12}{'mutants':>9}{'caught':>9}{'equivalent':>12}{'left':>7}")
    for name in sorted({s for s, _ in counts}):
        row = [counts[name, k] for k in ("caught", "equivalent", "left")]
        print(f"{name:<12}{sum(row):>9}{row[0]:>9}{row[1]:>12}{row[2]:>7}")
    print(f"{len(mutants)} mutants in {seconds:.0f} s ({args.children} at once)")
    for m, change in unexplained:
        print(f"\n{m.status}: {m.name}  (cd mutants && ../.venv/bin/mutmut show {m.name!r})\n  - {change.original}\n  + {change.mutated}")
    in_scope = {m.function for m in mutants}
    stale = [e for e in allowed if e.change not in used and e.change.function in in_scope]
    for e in stale:
        print(f"\nstale allowlist entry (no surviving mutant makes this change any more): {e.change.function}\n"
              f"  - {e.change.original}\n  + {e.change.mutated}")
    if not mutants:
        print("no mutants were run: the scope matched nothing")
        return 1
    if unexplained or stale:
        print(f"\n{len(unexplained)} mutants survived that are not argued equivalent in {ALLOWLIST.relative_to(ROOT)}, "
              f"{len(stale)} stale entries: kill each with a test, or argue it there")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
