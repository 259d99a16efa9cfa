"""A trace as a lower observation level would have recorded it (``flowspec project --level L``).

Events of kinds the level does not show are dropped; the responses they wrote stay, as ``Response``
events at the same ``ts`` (at ``queues`` a send's SUCCESS, written inside the put path; at
``black-box`` every answer). At ``black-box`` an arrival does not say which remoting thread decoded
it. Sequence numbers are renumbered without gaps, per trace.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from spec.remoting import RequestArrives
from traces.format.records import HEADER_KIND, LEVEL_KINDS, RESPONSE_KIND, Observation

#: The levels, from the least to the most shown.
LEVELS = (Observation.BLACK_BOX, Observation.QUEUES, Observation.FULL)


def project(records: Iterable[Mapping[str, Any]], level: Observation) -> Iterator[dict[str, Any]]:
    """The records of validated traces (each trace's in seq order) as ``level`` would show them."""
    visible = LEVEL_KINDS[level]
    seqs: dict[str, int] = {}

    def numbered(trace_id: str, event: dict[str, Any]) -> dict[str, Any]:
        seqs[trace_id] += 1
        return {**event, "seq": seqs[trace_id]}

    for r in records:
        trace_id, kind = r["trace_id"], r["kind"]
        if kind == HEADER_KIND:
            shown = Observation(r["observation"])
            if LEVELS.index(shown) < LEVELS.index(level):
                raise ValueError(f"trace {trace_id} is observed at {shown.value!r}: it cannot be projected up to {level.value!r}")
            seqs[trace_id] = 0
            yield {**r, "observation": level.value}
        elif kind in visible:
            event = dict(r)
            if kind == RequestArrives.__name__ and level is Observation.BLACK_BOX:
                event["io_thread"] = None  # a proxy does not see which remoting thread decoded it
            yield numbered(trace_id, event)
        else:
            for response in r.get("responses") or ():
                yield numbered(trace_id, {"trace_id": trace_id, "ts": r["ts"], "kind": RESPONSE_KIND, "responses": [response]})
