"""Generate docs/spec.md from the spec itself: scope, profiles, actions, claims, models, corners.

Every table is read from the code (docstrings, profile records, the claim registry), so the
document cannot drift from the spec: tests/test_docs.py fails when the checked-in file differs
from what this module generates. ``make docs`` (``python -m properties.docgen``) rewrites it.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import fields
from pathlib import Path

import spec
from properties import corners
from spec import profiles
from spec.actors import actor_of
from spec.machine import ACTION_TYPES, KINDS, RULES
from spec.invariants import ALL_CLAIMS, Claim
from properties.models import MODELS
from spec.profiles import Profile
from spec.releases import ADMIN_CASES, BEHAVIOURS, DEFAULT_PROFILE, EXECUTORS, PROFILES, REGISTRATIONS, RELEASES, profile

DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "spec.md"
def paragraphs(doc: str | None) -> list[str]:
    """A docstring's paragraphs, each joined into one line."""
    text = inspect.cleandoc(doc or "")
    return [" ".join(line.strip() for line in p.splitlines()) for p in text.split("\n\n") if p.strip()]


_LABEL = re.compile(r"^[A-Z][A-Za-z ]*:")


def labelled(doc: str | None, label: str) -> str:
    """The text after ``label:`` up to a blank line or the next ``Label:`` line; "" if none."""
    lines = inspect.cleandoc(doc or "").splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith(label + ":"):
            taken = [line.strip()[len(label) + 1 :].strip()]
            for following in lines[i + 1 :]:
                if not following.strip() or _LABEL.match(following.strip()):
                    break
                taken.append(following.strip())
            return " ".join(taken)
    return ""


def action_functions(name: str) -> tuple[Callable[..., object], Callable[..., object]]:
    """The guard and effect functions of the action class ``name`` (declared beside it in its actor's module)."""
    return RULES[KINDS[name]]


def action_source(name: str) -> str:
    """The ``Source:`` of an action: its effect's, else its guard's, else its actor module's."""
    guard, effect = action_functions(name)
    module = inspect.getmodule(effect)
    for doc in (effect.__doc__, guard.__doc__, module.__doc__ if module else None):
        found = labelled(doc, "Source")
        if found:
            return found
    return ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _first(doc: str | None, strip: str = "") -> str:
    ps = paragraphs(doc)
    text = ps[0] if ps else ""
    return text[len(strip) :].strip() if strip and text.startswith(strip) else text


def action_rows() -> Iterable[str]:
    """The actions table, grouped by actor in the order of spec.machine.ACTION_TYPES."""
    yield "| action | actor | guard | effect | changes | source | simplification |"
    yield "|---|---|---|---|---|---|---|"
    for cls in ACTION_TYPES:
        guard, effect = action_functions(cls.__name__)
        args = ", ".join(f.name for f in fields(cls))
        yield (
            f"| `{cls.__name__}({args})` | {actor_of(cls)} | {_cell(_first(guard.__doc__, 'Guard:'))} "
            f"| {_cell(_first(effect.__doc__, 'Effect:'))} | {labelled(cls.__doc__, 'Changes')} "
            f"| {_cell(action_source(cls.__name__))} | {_cell(labelled(effect.__doc__, 'Simplification'))} |"
        )


def claim_rows(claims: Iterable[Claim]) -> Iterable[str]:
    """The claims table: name, modality, statement, why, source."""
    yield "| claim | modality | statement | why it matters | source |"
    yield "|---|---|---|---|---|"
    for c in claims:
        ps = paragraphs(c.doc)
        why = next((p[4:].strip() for p in ps if p.startswith("Why:")), "")
        yield (
            f"| `{c.name}` | {c.modality.value} | {_cell(ps[0] if ps else '')} | {_cell(why)} "
            f"| {_cell(labelled(c.doc, 'Source'))} |"
        )


def profile_field_docs() -> dict[str, str]:
    """Profile field → its attribute docstring (the string literal after the field)."""
    tree = ast.parse(Path(profiles.__file__).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Profile")
    docs: dict[str, str] = {}
    for node, following in zip(cls.body, cls.body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
                docs[node.target.id] = " ".join(str(following.value.value).split())
    return docs


def _value(v: object) -> str:
    if isinstance(v, frozenset):
        return ", ".join(sorted(getattr(x, "name", str(x)) for x in v))
    if isinstance(v, tuple):
        return "; ".join(_value(x) for x in v)
    if hasattr(v, "name") and hasattr(v, "value"):
        return str(getattr(v, "name"))
    if hasattr(v, "threads") and hasattr(v, "capacity"):
        t = getattr(v, "threads")
        cap = getattr(v, "capacity")
        return f"{t.base}+{t.per_processor}P" + (f"≤{t.cap}" if t.cap else "") + f"/{cap if cap is not None else '∞'}"
    return str(v)


def profile_rows(ps: Iterable[Profile]) -> Iterable[str]:
    """One row per profile field, one column per profile, and the field's versions note."""
    ps = list(ps)
    docs = profile_field_docs()
    yield "| field | " + " | ".join(p.version for p in ps) + " | meaning and versions |"
    yield "|---|" + "---|" * len(ps) + "---|"
    for f in fields(Profile):
        if f.name == "version":
            continue
        values = []
        for p in ps:
            v = getattr(p, f.name)
            if f.name == "executor_of_code":
                v = tuple(f"{_CODE_NAMES.get(a, a)}→{_value(b)}" for a, b in v)
            elif f.name in {"executors", "cleaned_queues"}:
                v = tuple(f"{_value(a)}→{_value(b)}" for a, b in v)
            elif f.name == "admin_codes":
                v = f"{len(v)} codes"
            values.append(_cell(_value(v)))
        yield f"| `{f.name}` | " + " | ".join(values) + f" | {_cell(docs.get(f.name, ''))} |"


_CODE_NAMES = {r.code: r.name for r in REGISTRATIONS} | {c.code: c.name for c in ADMIN_CASES}


def _shown(field: str, value: object) -> str:
    if field == "cleaned_queues" and isinstance(value, tuple):
        return _value(tuple(f"{_value(q)} {w}" for q, w in value))
    return _value(value)


def release_rows() -> Iterable[str]:
    """One row per release, one column per behaviour that is one value per release."""
    names = [b.field for b in BEHAVIOURS]
    yield "| release | " + " | ".join(f"`{n}`" for n in names) + " | executors | registered codes | admin cases |"
    yield "|---|" + "---|" * (len(names) + 3)
    for release in RELEASES:
        p = profile(release)
        cells = [_cell(_shown(n, getattr(p, n))) for n in names]
        executors = ", ".join(_value(name) for name, _ in p.executors)
        yield f"| {release} | " + " | ".join(cells) + f" | {executors} | {len(p.executor_of_code)} | {len(p.admin_codes)} |"


def change_rows() -> Iterable[str]:
    """Each change of a behaviour or an executor's defaults, with its source at that release."""
    yield "| what | from | value | source |"
    yield "|---|---|---|---|"
    for b in BEHAVIOURS:
        for first, value, source in b.changes:
            shown = _shown(b.field, value)
            yield f"| `{b.field}` | {first} | {_cell(shown)} | [{first}]({source}) |"
    for row in EXECUTORS:
        until = f"–{row.last}" if row.last else "+"
        yield f"| executor `{row.name.value}` | {row.first}{until} | {_value(row.defaults)} | [{row.first}]({row.source}) |"


def registration_rows() -> Iterable[str]:
    """The processor table: each registration and the releases it is made in."""
    yield "| code | name | executor | releases | source |"
    yield "|---:|---|---|---|---|"
    for r in REGISTRATIONS:
        releases = f"{r.first}–{r.last}" if r.last else f"{r.first}+"
        yield f"| {r.code} | `{r.name}` | {r.executor.value} | {releases} | [BrokerController.java:{r.line}]({r.source}) |"


def corner_rows() -> Iterable[str]:
    """Covered and left-out corner cases."""
    yield "| # | status | where in the spec, or why it is left out |"
    yield "|---|---|---|"
    for n in range(1, 40):
        if n in corners.COVERED:
            note = corners.COVERED[n]
            if n in corners.PARTLY_LEFT_OUT:
                note += f". Left out: {corners.PARTLY_LEFT_OUT[n]}"
            yield f"| {n} | covered (`test_corner_{n:02d}_*`) | {_cell(note)} |"
        else:
            yield f"| {n} | left out | {_cell(corners.LEFT_OUT[n])} |"


def model_rows() -> Iterable[str]:
    """The exploration models."""
    yield "| model | what it explores | purpose |"
    yield "|---|---|---|"
    default = PROFILES[DEFAULT_PROFILE]
    for name, make in MODELS.items():
        m = make(default)
        yield f"| `{name}` | {_cell(m.description)} | {_cell(_first(make.__doc__))} |"


def generate() -> str:
    """The whole of docs/spec.md."""
    module_doc = inspect.cleandoc(spec.__doc__ or "")
    out = [
        "# The rocketmq-flowspec specification",
        "",
        "<!-- Generated by `make docs` (python -m properties.docgen) from the spec's code and docstrings."
        " Do not edit: tests/test_docs.py fails when this file is stale. -->",
        "",
        module_doc,
        "",
        "## Version profiles",
        "",
        "Every version difference is a field of `spec.profiles.Profile`. Executors read"
        " `base+kP≤cap/capacity` (threads as a function of the processor count P; ∞ = unbounded queue).",
        "",
        *profile_rows(PROFILES.values()),
        "",
        "## Every release",
        "",
        "`spec.releases` builds the profile of every release from where each behaviour changed;"
        " `--profile` and a trace header's `profile` accept any of them. Executors are the ones the"
        " spec models (send, pull, litePull, query, heartbeat, endTransaction, ack, clientManage,"
        " consumerManage, reply, loadBalance, admin) that the release has.",
        "",
        *release_rows(),
        "",
        "### Where each behaviour changed",
        "",
        *change_rows(),
        "",
        "### The processor table",
        "",
        "A code with no registration in a release goes to the default processor, AdminBrokerProcessor,"
        " on the admin executor; its switch answers the release's admin cases (`spec.releases.ADMIN_CASES`,"
        " with a source link per case) and sends any other code to its `default:` branch.",
        "",
        *registration_rows(),
        "",
        "## Actions",
        "",
        "One action per atomic step of a broker thread or of the environment. Guard and effect are"
        " quoted from `enabled`/`step` in the actor's module; `changes` lists the only state fields"
        " the action may change (checked by tests/test_spec_actions.py).",
        "",
        *action_rows(),
        "",
        "## Claims",
        "",
        "Always-claims are checked in every explored state (state claims) or step (transition claims),"
        " after every lockstep step of the property suites, and over replayed traces. A state claim"
        " lists the state fields it reads (checked by tests/test_claim_reads.py): a replay re-checks it"
        " only after a step that changed one of them.",
        "",
        *claim_rows(ALL_CLAIMS),
        "",
        "## Exploration models",
        "",
        "`flowspec explore --profile P [--model M]` visits every reachable state of these models"
        " (`properties/models.py`); their state counts are pinned in tests/test_explore.py."
        " A state holds only what the broker holds: what a step answered is its output, not part of"
        " the state, so two runs that leave the broker alike reach one state. When the history left"
        " the state the counts fell by 0.4–28% (overload 18197 → 13156, stuck-lock under 4.9.8"
        " 12203 → 10769) with the same verdicts.",
        "",
        *model_rows(),
        "",
        "## Corner cases",
        "",
        *corner_rows(),
        "",
    ]
    return "\n".join(out)


def main() -> int:
    """Write docs/spec.md."""
    DOC_PATH.parent.mkdir(parents=True, exist_ok=True)
    DOC_PATH.write_text(generate())
    print(f"wrote {DOC_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
