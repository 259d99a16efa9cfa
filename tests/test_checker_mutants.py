"""The checker's mutation gate reads what it should: its allowlist names lines that exist, and CI's
part of scan.py names functions that exist (a renamed function would otherwise leave CI silently)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from properties.checker_mutants import CI_FUNCTIONS, ROOT, SCOPES, load_allowlist


def _functions(path: Path) -> set[str]:
    """mutmut's names of the functions it mutates in ``path``: x_function, xǁClassǁmethod."""
    tree = ast.parse(path.read_text())
    names = {f"x_{f.name}" for f in tree.body if isinstance(f, ast.FunctionDef)}
    names |= {f"xǁ{c.name}ǁ{f.name}" for c in tree.body if isinstance(c, ast.ClassDef) for f in c.body if isinstance(f, ast.FunctionDef)}
    return names


def test_each_function_ci_mutates_exists_in_the_rules_scope() -> None:
    modules = {m.removesuffix(".py").replace("/", "."): ROOT / m for m in SCOPES["rules"].modules}
    for pattern in CI_FUNCTIONS:
        named = re.fullmatch(r"(traces\.checking\.\w+)\.(.*)", pattern)
        assert named, pattern
        module, function = named.groups()
        assert module in modules, pattern
        if function != "*":
            assert function.removesuffix("__mutmut_*") in _functions(modules[module]), pattern


def test_each_allowlisted_mutant_names_a_line_of_its_function_in_a_scope() -> None:
    entries = load_allowlist()
    assert entries
    mutated = {m.removesuffix(".py").replace("/", "."): ROOT / m for s in SCOPES.values() for m in s.modules}
    for entry in entries:
        module = next(m for m in mutated if entry.change.function.startswith(m + "."))
        source = [line.strip() for line in mutated[module].read_text().splitlines()]
        assert entry.change.original in source, entry.change
        assert entry.change.mutated not in source and entry.why.strip()


def test_each_test_the_mutation_runs_leave_out_exists() -> None:
    """A ``--deselect`` in ``[tool.mutmut]`` names a test of its file (a renamed slow test would
    otherwise come back into every mutant's run, and its name would stay in the list for nothing)."""
    import tomllib

    args = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]["pytest_add_cli_args"]
    left_out = [node for flag, node in zip(args, args[1:]) if flag == "--deselect"]
    assert left_out
    for node in left_out:
        path, test = node.split("::")
        tests = {f.name for f in ast.parse((ROOT / path).read_text()).body if isinstance(f, ast.FunctionDef)}
        assert test.split("[")[0] in tests, node
