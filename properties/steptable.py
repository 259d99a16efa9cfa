"""Step tables: a run of the machine as rows a person can read.

Each row is one step: its number, the action with its arguments, and every state field the
step changed, before → after, rendered compactly (a queue as its request ids, a worker as its
stage and request). The last row names the claim the run broke.
"""

from __future__ import annotations

from collections.abc import Sequence
import enum
from dataclasses import fields

from spec.actors import Action
from spec.frozen import record
from spec.putlock import PutLock
from spec.state import BrokerState, Executor, ForeignTask, IoThread, MappedFile, QueueElement, Response


def _element(e: QueueElement) -> str:
    if isinstance(e, ForeignTask):
        return f"foreign#{e.id}"
    flag = "!" if e.stop_run else ""
    return f"r{e.request.id}@{e.create_timestamp}{flag}"


def _executor(e: Executor) -> str:
    queue = ",".join(_element(t) for t in e.queue)
    workers = ",".join(w.stage.value + (f"(r{w.task.request.id})" if w.task else "") for w in e.workers)
    return f"{e.name.value}[q=({queue}) w=({workers})]"


def _io(io: IoThread) -> str:
    return io.stage.value + (f"(r{io.request.id})" if io.request else "")


def _file(f: MappedFile) -> str:
    return f"f{f.index}[w{f.wrote}/c{f.committed} buf={f.write_buffer}]"


def _response(r: Response) -> str:
    return f"r{r.request_id}:{r.code.name}:{r.remark!r}"


def render(field: str, value: object) -> str:
    """A compact rendering of one state field's value."""
    if field == "executors" and isinstance(value, tuple):
        return " ".join(_executor(e) for e in value)
    if field == "io_threads" and isinstance(value, tuple):
        return " ".join(_io(io) for io in value)
    if field == "files" and isinstance(value, tuple):
        return " ".join(_file(f) for f in value) or "()"
    if field == "responses" and isinstance(value, tuple):
        return "; ".join(_response(r) for r in value[-2:]) + (f" (+{len(value) - 2} earlier)" if len(value) > 2 else "")
    if isinstance(value, PutLock):
        holder = "free" if value.holder is None else f"{value.holder[0]}#{value.holder[1]}"
        return f"holder={holder} begin={value.begin_time_in_lock}"
    if isinstance(value, frozenset):
        return "{" + ",".join(str(v) for v in sorted(value)) + "}"
    if isinstance(value, enum.Enum):
        return value.name
    return repr(value)


def changed_fields(before: BrokerState, after: BrokerState) -> list[tuple[str, str, str]]:
    """(field, before, after) for every top-level field the step changed."""
    out = []
    for f in fields(BrokerState):
        b, a = getattr(before, f.name), getattr(after, f.name)
        if b != a:
            out.append((f.name, render(f.name, b), render(f.name, a)))
    return out


def describe_action(a: Action) -> str:
    """``ActionName(arg=value, ...)`` with enum values unwrapped."""
    args = ", ".join(f"{f.name}={render(f.name, getattr(a, f.name))}" for f in fields(a))
    return f"{type(a).__name__}({args})"


@record
class Step:
    """One step of a run: the action taken and the state it led to."""

    action: Action
    after: BrokerState


def step_table(initial: BrokerState, steps: Sequence[Step], broken: str | None = None) -> str:
    """The run as a table: step, action, fields changed before → after; then the claim broken."""
    lines = ["step | action | changed (before -> after)", "-----|--------|--------------------------"]
    before = initial
    for i, st in enumerate(steps, 1):
        changes = changed_fields(before, st.after)
        first = True
        for name, b, a in changes or [("-", "", "")]:
            head = f"{i:>4} | {describe_action(st.action)}" if first else "     |"
            lines.append(f"{head} | {name}: {b} -> {a}")
            first = False
        before = st.after
    if broken:
        lines.append(f"claim broken after step {len(steps)}: {broken}")
    return "\n".join(lines)
