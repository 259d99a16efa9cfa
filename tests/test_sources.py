"""Citations: every source the project cites is a link a reader can follow, and nothing refers to
a file outside the repository (docs/sources.md says how a citation looks)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from spec.releases import RELEASES, release_tag

ROOT = Path(__file__).resolve().parent.parent

APACHE = re.compile(r"https://github\.com/apache/rocketmq/blob/([^/\s)]+)/([^\s)#]+)(#L\d+(?:-L\d+)?)?")
ALLOWED = re.compile(
    r"https://github\.com/apache/rocketmq/blob/[^/\s)]+/[^\s)#]+\.java#L\d+"
    r"|https://github\.com/google/guava/blob/v31\.1/guava/src/com/google/common/util/concurrent/\w+\.java"
    r"|https://docs\.oracle\.com/en/java/javase/17/docs/api/java\.base/java/util/concurrent/\w+\.html"
    r"|docs/sources\.md, source 004"
)
SOURCE_PARAGRAPH = re.compile(r"Sources?:(.*?)(?=\n\s*\n|\"\"\"|\n\s*(?:Why|Changes|Simplification|Note|Guard|Effect|Actor)\b)", re.S)
OUTSIDE = ("../" + "shared", "shared/" + "rocketmq", "semantics" + ".md", "ENGINEERING" + ".md", "STYLE" + ".md")


def _tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    names += subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    return [ROOT / n for n in names if n.endswith((".py", ".md", ".json", ".toml", ".properties")) or n in ("Makefile", ".ci/run")]


def test_no_file_refers_to_anything_outside_the_repository() -> None:
    found = [f"{p.relative_to(ROOT)}: {word}" for p in _tracked_text_files() if p.exists() for word in OUTSIDE if word in p.read_text()]
    assert not found, found


def test_every_link_to_apache_rocketmq_names_a_release_tag_a_file_and_lines() -> None:
    """A source file (Java, or a script of the distribution such as bin/runbroker.sh) at a release tag, with lines."""
    tags = {release_tag(r) for r in RELEASES}
    bad = []
    for p in _tracked_text_files():
        if not p.exists():
            continue
        for m in APACHE.finditer(p.read_text()):
            tag, path, lines = m.groups()
            if tag not in tags or not path.endswith((".java", ".sh")) or lines is None:
                bad.append(f"{p.relative_to(ROOT)}: {m.group(0)}")
    assert not bad, bad


def test_every_source_line_of_the_spec_and_the_reference_cites_a_link() -> None:
    bare = []
    for p in sorted([*ROOT.glob("spec/*.py"), *ROOT.glob("reference/*.py")]):
        text = p.read_text()
        for m in SOURCE_PARAGRAPH.finditer(text):
            if not ALLOWED.search(m.group(0)):
                line = text[: m.start()].count("\n") + 1
                bare.append(f"{p.relative_to(ROOT)}:{line}: {' '.join(m.group(0).split())[:120]}")
    assert not bare, bare


def test_the_checker_refuses_a_bare_citation() -> None:
    assert not ALLOWED.search("Source: S/CommitLog.java putMessage (corner 4).")
    unpinned = "https://github.com/apache/rocketmq/blob/" + "develop/store/CommitLog.java"
    found = APACHE.fullmatch(unpinned)
    assert found is not None and found.group(3) is None and found.group(1) not in {release_tag(r) for r in RELEASES}
