"""docs/spec.md is generated from the spec and must be current; every action cites its source."""

from __future__ import annotations

import re

from spec.actors import actor_of
from spec.machine import ACTION_TYPES
from properties.docgen import DOC_PATH, action_functions, action_source, generate, labelled
from spec.invariants import ALL_CLAIMS, Modality


def test_the_checked_in_spec_document_is_current() -> None:
    assert DOC_PATH.read_text() == generate(), "docs/spec.md is stale: run `make docs` and commit it"


def test_every_action_has_an_actor_a_guard_an_effect_and_a_source() -> None:
    for cls in ACTION_TYPES:
        guard, effect = action_functions(cls.__name__)
        assert actor_of(cls), f"{cls.__name__} has no actor"
        assert labelled(cls.__doc__, "Changes"), f"{cls.__name__} has no Changes: line"
        assert (guard.__doc__ or "").strip().startswith("Guard:"), f"{guard.__name__} docstring must open with Guard:"
        assert effect.__doc__, f"{effect.__name__} has no docstring"
        if cls.__name__ != "ClockAdvances":
            assert action_source(cls.__name__), f"{cls.__name__} cites no Source:"


def test_every_claim_says_why_it_matters_except_reachability_checks() -> None:
    for claim in ALL_CLAIMS:
        if claim.modality is not Modality.SOMETIMES:
            assert "Why:" in claim.doc, f"{claim.name} does not say why it matters"


def test_the_python_examples_in_the_overview_run() -> None:
    text = (DOC_PATH.parent / "overview.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "docs/overview.md has no python example"
    for block in blocks:
        exec(compile(block, "docs/overview.md", "exec"), {})
