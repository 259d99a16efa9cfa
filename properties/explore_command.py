"""The ``flowspec explore`` subcommand: the spec checked by itself.

Exhaustive exploration of the model configurations in :mod:`properties.models`; the ``flowspec``
command (:mod:`traces.cli`) registers it with :func:`register`.

Exit status of ``explore``: 0 when no claim is broken and, over the models run, every
sometimes-property was reached (or, with ``--expect-violation C``, when exactly the claims named
are broken); 1 otherwise.
"""

from __future__ import annotations

import argparse
import json

from properties.explore import Exploration, explore
from spec.invariants import ALL_CLAIMS, SOMETIMES
from properties.models import MODELS, Model
from spec.releases import DEFAULT_PROFILE, RELEASES, profile
from spec.state import initial_state
from properties.steptable import step_table


def _summary(model: Model, result: Exploration) -> dict[str, object]:
    return {
        "model": model.name,
        "description": model.description,
        "states": result.states,
        "transitions": result.transitions,
        "max_depth": result.max_depth,
        "complete": result.complete,
        "seconds": round(result.seconds, 2),
        "broken": {
            name: {
                "steps": len(cx.steps),
                "path": [type(st.action).__name__ for st in cx.steps],
            }
            for name, cx in sorted(result.counterexamples.items())
        },
        "sometimes_reached": sorted(k for k, v in result.sometimes.items() if v),
        "actions_fired": dict(sorted(result.action_counts.items())),
    }


def _print_model(model: Model, result: Exploration) -> None:
    status = "complete" if result.complete else "INCOMPLETE (stopped at --max-states)"
    print(f"model {model.name}: {model.description}")
    print(
        f"  {result.states} distinct states, {result.transitions} transitions, depth {result.max_depth}, "
        f"{result.seconds:.1f} s, {status}"
    )
    for claim in ALL_CLAIMS:
        if claim.modality.name == "SOMETIMES":
            continue
        cx = result.counterexamples.get(claim.name)
        verdict = "holds" if cx is None else f"BROKEN (shortest path: {len(cx.steps)} steps)"
        print(f"  {claim.modality.value:<20} {claim.name:<55} {verdict}")
    reached = [c.name for c in SOMETIMES if result.sometimes.get(c.name)]
    print(f"  sometimes reached: {', '.join(reached) or 'none'}")
    for name, cx in sorted(result.counterexamples.items()):
        print(f"\n  counterexample for {name}:")
        table = step_table(initial_state(model.config), cx.steps, broken=name)
        print("\n".join("    " + line for line in table.splitlines()))
    print()


def run_explore(args: argparse.Namespace) -> int:
    """``flowspec explore``."""
    prof = profile(args.profile)
    names = [args.model] if args.model else list(MODELS)
    results: list[tuple[Model, Exploration]] = []
    for name in names:
        model = MODELS[name](prof)
        results.append(
            (model, explore(model.config, model.env, check_liveness=not args.no_liveness, max_states=args.max_states))
        )
        if not args.json:
            _print_model(*results[-1])
    broken = sorted({name for _, r in results for name in r.counterexamples})
    reached = {c.name for c in SOMETIMES if any(r.sometimes.get(c.name) for _, r in results)}
    unreached = [c.name for c in SOMETIMES if c.name not in reached]
    expected = sorted(set(args.expect_violation))
    complete = all(r.complete for _, r in results)
    problems: list[str] = []
    if broken != expected:
        problems.append(f"broken claims {broken}, expected {expected}")
    if args.model is None and unreached:
        problems.append(f"sometimes-properties never reached (vacuous claims possible): {unreached}")
    if not complete:
        problems.append("exploration stopped at --max-states; the result covers only part of the state space")
    if args.json:
        print(
            json.dumps(
                {
                    "profile": prof.version,
                    "models": [_summary(m, r) for m, r in results],
                    "broken": broken,
                    "expected_broken": expected,
                    "unreached_sometimes": unreached,
                    "ok": not problems,
                    "problems": problems,
                },
                indent=2,
            )
        )
    else:
        total = sum(r.states for _, r in results)
        print(f"profile {prof.version}: {total} states over {len(results)} model(s); broken claims: {broken or 'none'}")
        for p in problems:
            print(f"FAIL: {p}")
        if not problems:
            print("OK" + (f" (the expected violation{'s' if len(expected) > 1 else ''} {expected} found)" if expected else ""))
    return 1 if problems else 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``explore`` to the ``flowspec`` command line."""
    ex = subparsers.add_parser("explore", help="exhaustively explore the spec's small models, checking every claim")
    ex.add_argument("--profile", default=DEFAULT_PROFILE, choices=RELEASES)
    ex.add_argument("--model", choices=sorted(MODELS), help="one model (default: all)")
    ex.add_argument("--json", action="store_true", help="print a JSON summary instead of tables")
    ex.add_argument(
        "--expect-violation",
        action="append",
        default=[],
        metavar="CLAIM",
        help="a claim known to be broken in this profile (repeatable); exit 0 only if exactly these break",
    )
    ex.add_argument("--no-liveness", action="store_true", help="skip the bounded-liveness check")
    ex.add_argument("--max-states", type=int, help="stop after this many states (the result is then incomplete)")
    ex.set_defaults(func=run_explore)
