"""How ``flowspec check`` ends: its exit statuses, and a failure of the checker itself.

A CI job reads the status alone, so each outcome has its own and a crash never looks like a
verdict:

====  =====================================================================================
0     every trace is conformant
1     at least one trace has a violation
2     invalid input: a file, line or row, and field that cannot be read or is not a valid trace;
      or a file that a Spark task cannot open (:class:`UnreadableInput`, naming the node)
3     no violation, but at least one trace is inconclusive (a rule or the replay could not
      judge it: a lower observation level, or a partial replay's budget ran out)
4     the checker failed (an exception in the driver or a Spark task): no verdict was reached
====  =====================================================================================

A task that fails raises :class:`CheckerFailure` naming the trace, the event (its ``seq``) when
the failure happened at one, and the cause; Spark carries it to the driver inside its own
exception, from which :func:`checker_failure_message` takes the message back.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

from traces.format.read import InputProblem
from traces.format.storage import first_line

EXIT_CONFORMANT = 0
EXIT_VIOLATION = 1
EXIT_INVALID = 2
EXIT_INCONCLUSIVE = 3
EXIT_CHECKER_FAILED = 4

_MARK = "flowspec checker failure: "
_UNREADABLE_MARK = "flowspec unreadable input: "


class CheckerFailure(RuntimeError):
    """The checker could not judge a trace: an error of the checker, not of the trace."""

    def __init__(self, trace_id: str, cause: BaseException, seq: int | None = None) -> None:
        where = f"trace {trace_id!r}" + (f", event seq {seq}" if seq is not None else "")
        self.message = f"{where}: {type(cause).__name__}: {cause}"
        super().__init__(_MARK + self.message)


def checker_failure_message(error: BaseException) -> str:
    """One line for an exception that ended the check: the failing task's own message when the
    exception (or Spark's wrapping of it) carries a :class:`CheckerFailure`, else the exception."""
    if isinstance(error, CheckerFailure):
        return error.message
    found = re.search(re.escape(_MARK) + r"(.*)", str(error))
    if found:
        return found.group(1).strip()
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {first}"


class UnreadableInput(RuntimeError):
    """A file of the input that a node (a Spark task's, or the driver's) could not open or read:
    invalid input, not a failure of the checker. Its message carries the file, the node and the
    cause as one line of JSON, which :func:`unreadable_input` finds again in Spark's wrapping."""

    def __init__(self, source: str, cause: BaseException) -> None:
        self.problem = {"file": source, "node": socket.gethostname(), "message": f"cannot be read on node {socket.gethostname()}: {first_line(cause)}"}
        super().__init__(_UNREADABLE_MARK + json.dumps(self.problem))


@contextmanager
def unreadable_here(source: str) -> Iterator[None]:
    """Reading ``source`` inside: an error of opening or reading it is :class:`UnreadableInput`."""
    try:
        yield
    except (OSError, pa.ArrowException, InputProblem) as e:
        raise UnreadableInput(source, e) from e


def unreadable_input(error: BaseException) -> dict[str, Any] | None:
    """The problem (file, node, message) of an :class:`UnreadableInput` that ended the check,
    itself or inside Spark's exception (or a :class:`CheckerFailure` wrapping it); else None."""
    if isinstance(error, UnreadableInput):
        return error.problem
    found = re.search(re.escape(_UNREADABLE_MARK) + r"(\{.*\})", str(error))
    return None if found is None else dict(json.loads(found.group(1)))
