"""The spec compiled by mypyc, for the workers that replay traces.

Replaying a trace runs the spec's ``step`` once per event, so the replay's speed is the spec's.
The replay's workers therefore run the *same source*, compiled to C extensions by mypyc (the
compiler mypy ships with): same functions, same records, same verdicts, faster (``make bench``
replays the 1M-event dataset in one process with each and prints the ratio; docs/benchmarks.md
keeps the figures). Nothing else changes: the driver, the tests of the spec, CrossHair and the property
suites keep importing the interpreted spec from the working tree.

The build (``make compiled``, which ``make venv`` and the targets that use Spark run) copies
``spec/``, ``traces/`` and ``properties/`` into :data:`BUILD` and compiles, next to their copies,
the modules in :data:`COMPILED`: the spec, the replayer and the partial replay's searches. The rest stays interpreted: it is not
on the replay's path.

The build records the SHA-256 of every file it copied. :func:`compiled_path` gives the build
only while each of them still equals the working tree's file; after any edit it gives None and
says which file changed, and the workers replay with the interpreted spec (correct, slower)
until the next ``make compiled``. A stale build is never used.

Spark's Python workers find the build first on their path (:func:`traces.checking.session.get_spark`).
With ``local[N]`` that is :data:`BUILD` itself. On a cluster, Spark ships it the way it ships code:
:func:`archive` zips the up-to-date build, the session adds the zip as an archive, which every
executor unpacks into its working directory, and the workers' ``PYTHONPATH`` names that copy
(build on a machine like the executors: same Python, same platform).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Where the build lives (``make clean`` removes ``build/``).
BUILD = ROOT / "build" / "compiled-spec"
#: The manifest: each copied file's path (relative to the root) and SHA-256.
MANIFEST = "SOURCES.json"
#: The packages copied into the build (whole, so that every import resolves inside it; the replay
#: renders divergences with properties.steptable).
PACKAGES = ("spec", "traces", "properties")
#: Folders of those packages that no worker imports: the Java agent's sources (docs/agent.md).
NOT_COPIED = (Path("traces") / "agent",)


def _sources() -> list[Path]:
    """Every file the build copies, relative to the root."""
    files: list[Path] = []
    for package in PACKAGES:
        for f in sorted((ROOT / package).rglob("*")):
            rel = f.relative_to(ROOT)
            if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".so", ".pyc") and not any(
                rel.is_relative_to(d) for d in NOT_COPIED
            ):
                files.append(rel)
    return files


def _compiled_modules(files: list[Path]) -> list[str]:
    """The modules mypyc compiles: the spec's, the replayer with its decoding of records, and the
    partial replay's searches with the wire's conditions they start from."""
    spec = [str(f) for f in files if f.parent == Path("spec") and f.suffix == ".py"]
    searches = ["traces/checking/partial.py", "traces/checking/witness.py", "traces/checking/reduction.py", "traces/checking/necessary.py"]
    return [*spec, "traces/format/records.py", "traces/checking/replay.py", *searches]


#: The modules compiled, relative to the root.
COMPILED = tuple(_compiled_modules(_sources()))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compiled_path() -> tuple[Path | None, str]:
    """The build directory if it is complete and every copied file is unchanged, else None; and why."""
    manifest = BUILD / MANIFEST
    if not manifest.is_file():
        return None, f"no compiled spec in {BUILD} (run `make compiled`)"
    recorded: dict[str, str] = json.loads(manifest.read_text())
    current = {str(f) for f in _sources()}
    for name in sorted(current | set(recorded)):
        if name not in recorded or name not in current or _digest(ROOT / name) != recorded[name]:
            return None, f"the compiled spec in {BUILD} is out of date ({name} changed; run `make compiled`)"
    return BUILD, f"compiled spec: {BUILD}"


def archive() -> tuple[Path | None, str]:
    """The up-to-date build zipped for Spark to ship to the executors, or None; and why. The zip
    is named after the build's manifest, so a zip of an earlier build is never shipped."""
    path, why = compiled_path()
    if path is None:
        return None, why
    zipped = BUILD.parent / f"{BUILD.name}-{_digest(path / MANIFEST)[:16]}.zip"
    if not zipped.is_file():
        zip_build(path, zipped)
    return zipped, f"compiled spec: {zipped}"


def zip_build(build: Path, zipped: Path) -> None:
    """Zip the directory ``build`` as ``zipped`` and remove the zips of earlier builds beside it
    (``<build's name>-*.zip``). Several processes may do this at once (pytest's two workers may
    each start Spark): each writes its own staging file, hidden from the others' removal of old
    zips, and moves it into place in one step, so a process never sees a zip half written, and
    the last to finish replaces an identical one."""
    for old in zipped.parent.glob(f"{build.name}-*.zip"):
        if old != zipped:
            old.unlink(missing_ok=True)
    descriptor, staging = tempfile.mkstemp(prefix=f".{zipped.stem}-", suffix=".zip", dir=zipped.parent)
    os.close(descriptor)
    try:
        os.replace(shutil.make_archive(staging.removesuffix(".zip"), "zip", root_dir=build), zipped)
    finally:
        Path(staging).unlink(missing_ok=True)


def build() -> Path:
    """Copy the packages and compile :data:`COMPILED` with mypyc; replaces any earlier build."""
    files = _sources()
    BUILD.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="compiled-spec-", dir=BUILD.parent))
    for f in files:
        (staging / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, staging / f)
    # mypyc type-checks the modules with the project's mypy configuration, then writes each
    # extension module next to its copied source; its C sources go to staging/build.
    subprocess.run(
        [sys.executable, "-m", "mypyc", "--config-file", str(ROOT / "pyproject.toml"), *COMPILED],
        cwd=staging,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    shutil.rmtree(staging / "build")
    # The digests of the copies, not of the tree: a file edited during the build makes it stale.
    (staging / MANIFEST).write_text(json.dumps({str(f): _digest(staging / f) for f in files}, indent=1))
    if BUILD.exists():
        shutil.rmtree(BUILD)
    staging.rename(BUILD)
    return BUILD


def main() -> int:
    """``python -m traces.checking.compiled``: build, unless the build is already up to date."""
    path, why = compiled_path()
    if path is None:
        print(f"{why}\ncompiling {len(COMPILED)} modules with mypyc (2 to 3 minutes)", flush=True)
        build()
        path, why = compiled_path()
    print(why)
    return 0 if path is not None else 1


if __name__ == "__main__":
    sys.exit(main())
