"""Coverage of the lockstep runs: which actions fired and how often, which sometimes-properties were
reached, and which claims the spec itself broke (the modelled broker bugs).

``python -m properties.coverage`` runs the whole-broker machine for each profile under the loaded
Hypothesis settings and prints the table. It runs ``tests/test_properties_coverage.py`` through
pytest with ``-s``, so that the profiles tests/conftest.py registers apply: choose one with
``HYPOTHESIS_PROFILE=ci|dev|deep`` (default ci).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from properties.lockstep import Coverage
from spec.machine import ACTION_TYPES
from spec.invariants import SOMETIMES, STATE_CLAIMS

#: Actions the Java broker cannot take; the spec keeps them to judge other implementations' traces.
UNREACHABLE_IN_JAVA = {"WorkerDiscardsCancelledTask": "stopRun is set only after the task left its queue (corner 26)"}


def table(coverages: dict[str, Coverage]) -> str:
    """One column per run (e.g. per profile): action counts, sometimes-properties, claims the spec broke."""
    names = list(coverages)
    width = max(12, *(len(n) + 2 for n in names))
    label = 2 + max(len(n) for n in [t.__name__ for t in ACTION_TYPES] + [c.name for c in SOMETIMES + STATE_CLAIMS])

    def row(title: str, cells: Sequence[object]) -> str:
        return f"{title:<{label}}" + "".join(f"{str(c):>{width}}" for c in cells)

    lines = [row("", names), row("runs / steps", [f"{c.runs}/{c.steps}" for c in coverages.values()])]
    lines.append(row("lockstep steps/s", [f"{c.steps / c.seconds:.0f}" if c.seconds else "-" for c in coverages.values()]))
    lines.append("actions fired (times)")
    never: list[str] = []
    for t in ACTION_TYPES:
        counts = [c.actions[t.__name__] for c in coverages.values()]
        lines.append(row(f"  {t.__name__}", list(counts)))
        if not any(counts):
            never.append(t.__name__)
    lines.append("sometimes-properties reached (runs)")
    for claim in SOMETIMES:
        lines.append(row(f"  {claim.name}", [c.sometimes[claim.name] for c in coverages.values()]))
    lines.append("claims the spec itself broke (runs; modelled broker bugs)")
    for claim in STATE_CLAIMS:
        counts = [c.spec_breaks[claim.name] for c in coverages.values()]
        if any(counts):
            lines.append(row(f"  {claim.name}", list(counts)))
    for name in never:
        reason = UNREACHABLE_IN_JAVA.get(name, "not reached in this run")
        lines.append(f"NEVER FIRED: {name} ({reason})")
    unreached = [c.name for c in SOMETIMES if not any(cov.sometimes[c.name] for cov in coverages.values())]
    for name in unreached:
        lines.append(f"NEVER REACHED: {name}")
    return "\n".join(lines)


def main() -> int:
    """Run the coverage test through pytest, so that tests/conftest.py's Hypothesis profiles apply."""
    import pytest

    return int(pytest.main(["-q", "-s", "-p", "no:cacheprovider", "tests/test_properties_coverage.py", *sys.argv[1:]]))


if __name__ == "__main__":
    sys.exit(main())
