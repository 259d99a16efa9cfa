"""How ``flowspec check`` ends: its exit statuses, and a failure of the checker itself.

A CI job reads the status alone, so each outcome has its own and a crash never looks like a
verdict:

====  =====================================================================================
0     every trace is conformant
1     at least one trace has a violation
2     invalid input: a file, line or row, and field that cannot be read or is not a valid trace
3     no violation, but at least one trace is inconclusive (a rule or the replay could not
      judge it: a lower observation level, or a partial replay's budget ran out)
4     the checker failed (an exception in the driver or a Spark task): no verdict was reached
====  =====================================================================================

A task that fails raises :class:`CheckerFailure` naming the trace, the event (its ``seq``) when
the failure happened at one, and the cause; Spark carries it to the driver inside its own
exception, from which :func:`checker_failure_message` takes the message back.
"""

from __future__ import annotations

import re

EXIT_CONFORMANT = 0
EXIT_VIOLATION = 1
EXIT_INVALID = 2
EXIT_INCONCLUSIVE = 3
EXIT_CHECKER_FAILED = 4

_MARK = "flowspec checker failure: "


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
