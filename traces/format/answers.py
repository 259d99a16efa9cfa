"""How an answer is named in the checker's outputs: its remark's bracketed tag, else its code's name.

The five busy answers and source 004's limiter share one code (SYSTEM_BUSY), so an operator tells
them apart by the remark's tag: ``[REJECTREQUEST]``, ``[OVERLOAD]``, ``[PC_SYNCHRONIZED]`` (SYSTEM_BUSY
from 5.3.0), ``[PCBUSY_CLEAN_QUEUE]``, ``[TIMEOUT_CLEAN_QUEUE]``, ``[RateLimit]``; every other answer is
named by its code (``SUCCESS``, ``SYSTEM_ERROR``, ``REQUEST_CODE_NOT_SUPPORTED``, or ``code N``).
"""

from __future__ import annotations

from spec.codes import ResponseCode


def answer_tag(code: int, remark: str | None) -> str:
    """``[TAG]`` of a bracketed remark, else the response code's name."""
    if remark and remark.startswith("[") and "]" in remark:
        return remark[: remark.index("]") + 1]
    try:
        return ResponseCode(code).name
    except ValueError:
        return f"code {code}"
