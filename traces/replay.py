"""Replay: every event of a trace through the spec's ``enabled`` / ``step``, comparing responses.

For each event the replayer builds the spec action, advances the spec's clock to the event's
``ts`` (a trace need not record ``ClockAdvances``: a Java broker's clock moves on its own),
checks the guard, takes the step, and compares the responses the spec wrote in that step with
the ones the event records (code and remark; opaques mapped to the spec's sequential ids). It
also checks the spec's state and transition claims after every step. The first divergence
stops the trace and is explained: the event, expected against observed, and the state fields
that matter.

History. The spec's state keeps every response and several sets of request ids for checking
(``responses``, ``started``, ``cancelled``, ``finished_silently``); they only grow, so a long
trace would make each step cost O(trace). No guard reads them, so the replayer keeps their
meaning in its own bookkeeping (:class:`History`) and periodically drops settled requests from
the state (:func:`forget_settled`). The claims that need the whole history,
``each_request_is_answered_at_most_once`` and ``every_request_is_in_exactly_one_place``, are
checked on that bookkeeping instead of the compacted state.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spec.actions import Action, ClockAdvances, RequestArrives
from spec.codes import ResponseCode
from spec.config import BrokerConfig
from spec.invariants import (
    STATE_CLAIMS,
    TRANSITION_CLAIMS,
    answer_is_expected,
    broken_state_claims,
    responses_carry_the_profile_code_and_remark,
)
from spec.frozen import replace
from spec.machine import ActionNotEnabled, step
from spec.state import BrokerState, RequestTask, Response, initial_state
from spec.steptable import changed_fields, describe_action, render
from traces.format import (
    HEADER_KIND,
    RESPONSE_KIND,
    EventColumns,
    Observation,
    RecordedResponse,
    TraceHeader,
    action_from_record,
    header_from_record,
    responses_from_record,
)

#: Claims whose meaning spans the whole run; checked on :class:`History`, not on the compacted state.
HISTORY_CLAIMS = frozenset({"each_request_is_answered_at_most_once", "every_request_is_in_exactly_one_place"})
#: A claim over every response so far; each response is checked once, in the step that wrote it
#: (:func:`spec.invariants.answer_is_expected`).
RESPONSE_CLAIM = responses_carry_the_profile_code_and_remark.__name__
_LOCAL_STATE_CLAIMS = tuple(c for c in STATE_CLAIMS if c.name not in HISTORY_CLAIMS | {RESPONSE_CLAIM})
#: The local claims as (name, check, reads), read once per step rather than from each Claim.
_LOCAL_CHECKS = tuple((c.name, c.check, c.reads) for c in _LOCAL_STATE_CLAIMS)
#: Every state field some local claim reads: the only fields a step's change of is worth looking for.
_CLAIM_FIELDS = tuple(sorted({name for c in _LOCAL_STATE_CLAIMS for name in c.reads or ()}))
#: Whether some local claim does not say what it reads (and so is checked after every step).
_UNREAD = any(c.reads is None for c in _LOCAL_STATE_CLAIMS)
#: A segment's verdict when an event before it could not be followed (see :func:`replay_segment`).
UNREACHED = "unreached"
#: How many steps between two compactions of the state's history fields.
COMPACT_EVERY = 256


def in_flight(s: BrokerState) -> frozenset[int]:
    """Ids of the requests still somewhere in the broker: on a remoting thread, in a queue, on a worker."""
    ids = {io.request.id for io in s.io_threads if io.request is not None}
    for e in s.executors:
        ids.update(t.request.id for t in e.queue if isinstance(t, RequestTask))
        ids.update(w.task.request.id for w in e.workers if w.task is not None)
    return frozenset(ids)


def forget_settled(s: BrokerState) -> BrokerState:
    """``s`` without the history of settled requests (no guard reads it; see the module docstring)."""
    live = in_flight(s)
    return replace(
        s,
        responses=(),
        finished_silently=frozenset(),
        started=s.started & live,
        cancelled=s.cancelled & live,
    )


@dataclass
class History:
    """What the replayer remembers of settled requests: who got answered, who finished silently."""

    answered: set[int] = field(default_factory=set)
    silent: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class Divergence:
    """Where a trace and the spec part ways."""

    trace_id: str
    seq: int
    kind: str  # "not enabled", "responses differ", "claim broken", "clock went back", "unmodelled"
    expected: str
    observed: str
    state: str  # the relevant state fields, rendered
    record: str  # the raw event record (JSON)

    def explain(self) -> str:
        """A paragraph a person can act on."""
        return (
            f"trace {self.trace_id} seq {self.seq}: {self.kind}\n"
            f"  expected: {self.expected}\n  observed: {self.observed}\n"
            f"  state: {self.state}\n  record: {self.record}"
        )


@dataclass(frozen=True)
class ReplayResult:
    """The outcome of replaying one trace."""

    trace_id: str
    verdict: str  # "conformant" | "violation" | "inconclusive"; a segment may also be UNREACHED
    events: int  # events replayed (up to and including a divergence)
    divergence: Divergence | None = None
    reason: str = ""  # why inconclusive (or, for a segment, why it was not reached)
    actions: tuple[tuple[str, int], ...] = ()  # (kind, count) of the events replayed


def _render_state(s: BrokerState, names: Iterable[str]) -> str:
    return "; ".join(f"{n}={render(n, getattr(s, n))}" for n in names)


_STATE_FOR_KIND = ("now", "io_threads", "executors", "lock", "available_buffers", "fast_failure_phase")


def _record_text(record: Mapping[str, Any]) -> str:
    """The event as JSON, without null fields or an empty ``responses`` (however the trace spelled "nothing")."""
    return json.dumps({k: v for k, v in record.items() if v is not None and v != []}, default=str, sort_keys=True)


class Replayer:
    """Replays one trace, event by event; holds the spec state and the opaque ↔ id map."""

    def __init__(self, header: TraceHeader) -> None:
        self.header = header
        self.config: BrokerConfig = header.config
        self.state = initial_state(self.config)
        # The claims are re-checked only where a step changes what they read: check them all once.
        assert not broken_state_claims(self.config, self.state), "the spec's initial state breaks its own claims"
        self.history = History()
        self.opaque_of: dict[int, int] = {}  # spec request id -> opaque
        self.id_of: dict[int, int] = {}  # opaque -> spec request id
        self.steps = 0
        self.counts: dict[str, int] = {}

    def _divergence(self, seq: int, kind: str, expected: str, observed: str, state: str) -> Divergence:
        # The raw record is added by the caller, which holds it (SegmentReplay.add_record).
        return Divergence(self.header.trace_id, seq, kind, expected, observed, state, "")

    def _recorded(self, responses: Iterable[RecordedResponse]) -> list[tuple[int | None, int, str | None]]:
        return [(self.id_of.get(r.request_id), r.code, r.remark) for r in responses]

    def _show(self, responses: Iterable[tuple[int | None, int, str | None]]) -> str:
        parts = []
        for rid, code, remark in responses:
            opaque = self.opaque_of.get(rid, rid) if rid is not None else "?"
            parts.append(f"opaque {opaque}: {_code_name(code)} {remark!r}")
        return "[" + "; ".join(parts) + "]" if parts else "no response"

    def apply(
        self, seq: int, kind: str, ts: int, action: Action | None, opaque: int | None, responses: Sequence[RecordedResponse]
    ) -> Divergence | None:
        """Replay one validated event, given by its fields (``action`` is None for a black-box
        Response, ``opaque`` is a RequestArrives' ``request_id``); the divergence it causes, if any."""
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if action is None:
            return self._divergence(seq, "unmodelled", "an internal event", "a black-box Response", "")
        if ts < self.state.now:
            return self._divergence(seq, "clock went back", f"ts >= {self.state.now}", f"ts = {ts}", "")
        s = self._clock_to(ts, action)
        try:
            after = step(self.config, s, action)  # the guard is checked once, by step
        except ActionNotEnabled:
            return self._divergence(
                seq,
                "not enabled",
                f"an action the spec allows here; {describe_action(action)} is not",
                f"{describe_action(action)}",
                _render_state(s, _STATE_FOR_KIND),
            )
        if isinstance(action, RequestArrives):
            assert opaque is not None  # validation: a RequestArrives carries its request_id
            if opaque in self.id_of:
                return self._divergence(seq, "opaque reused", "a fresh opaque", f"opaque {opaque} again", "")
            self._number(opaque, s)
        if ts != after.now:
            return self._divergence(seq, "clock differs", f"ts = {after.now}", f"ts = {ts}", "")
        written = after.responses[len(s.responses) :]
        if (written or responses) and not _same_responses(written, observed := self._recorded(responses)):
            return self._divergence(
                seq,
                "responses differ",
                self._show((r.request_id, int(r.code), r.remark) for r in written),
                self._show(observed),
                "; ".join(f"{n}: {b} -> {a}" for n, b, a in changed_fields(s, after)),
            )
        broken = self._broken_claims(s, action, after, written)
        if broken:
            return self._divergence(
                seq,
                "claim broken",
                "every claim holds",
                ", ".join(broken),
                "; ".join(f"{n}: {b} -> {a}" for n, b, a in changed_fields(s, after)),
            )
        self._advance(s, after, written)
        return None

    def follow(self, ts: int, action: Action | None, opaque: int | None) -> bool:
        """Take an event's step without checking it (another segment checks it); False if the spec cannot take it.

        Only the step and the bookkeeping: no comparison of responses, no claims. What it
        skips is what the segment holding the event checks, so following costs a fraction of
        :meth:`apply` (see :func:`replay_segment`).
        """
        if action is None or ts < self.state.now:
            return False
        try:
            s = self._clock_to(ts, action)
            after = step(self.config, s, action)
        except ActionNotEnabled:
            return False
        if isinstance(action, RequestArrives):
            assert opaque is not None  # validation: a RequestArrives carries its request_id
            self._number(opaque, s)
        self._advance(s, after, after.responses[len(s.responses) :])
        return True

    def _clock_to(self, ts: int, action: Action) -> BrokerState:
        """The state with the clock moved to the event's ``ts`` (a trace need not record ClockAdvances)."""
        s = self.state
        if ts > s.now and not isinstance(action, ClockAdvances):
            s = step(self.config, s, ClockAdvances(ts - s.now))
        return s

    def _number(self, opaque: int, before: BrokerState) -> None:
        """Map an arriving request's opaque to the id the spec gave it (its ``next_request_id`` before the step)."""
        self.id_of[opaque] = before.next_request_id
        self.opaque_of[before.next_request_id] = opaque

    def _advance(self, before: BrokerState, after: BrokerState, written: tuple[Response, ...]) -> None:
        """Make ``after`` the current state; remember who was answered or finished silently."""
        if written:
            self.history.answered.update(r.request_id for r in written)
        if after.finished_silently is not before.finished_silently:
            self.history.silent |= after.finished_silently - before.finished_silently
        self.state = after
        self.steps += 1
        if self.steps % COMPACT_EVERY == 0:
            self.state = forget_settled(self.state)

    def _broken_claims(
        self, before: BrokerState, action: Any, after: BrokerState, written: tuple[Response, ...]
    ) -> list[str]:
        # Only what the step touched is re-checked: a state claim whose fields (``Claim.reads``)
        # are the same objects as in the last checked state has the same verdict, and every
        # transition claim holds of a step that wrote no response (tests/test_claim_reads.py).
        # Only the fields the claims read are compared, not all twenty.
        last, now = vars(self.state), vars(after)
        changed = {name for name in _CLAIM_FIELDS if last[name] is not now[name]}
        broken = (
            [name for name, check, reads in _LOCAL_CHECKS if (reads is None or not reads.isdisjoint(changed)) and not check(self.config, after)]
            if changed or _UNREAD
            else []  # two steps in three touch no field a local claim reads (the bench's base traces)
        )
        if written:
            if not all(answer_is_expected(self.config, r) for r in written):
                broken.append(RESPONSE_CLAIM)
            broken += [c.name for c in TRANSITION_CLAIMS if not c.check(self.config, before, action, after)]
            ids = [r.request_id for r in written]
            if len(set(ids)) < len(ids) or not self.history.answered.isdisjoint(ids):
                broken.append("each_request_is_answered_at_most_once")
        return broken

    def conclude(self, n: int, last: bool) -> ReplayResult:
        """The result after ``n`` checked events with no divergence; at the trace's end, conservation too."""
        problem = self.finish() if last else None
        if problem is not None:
            d = Divergence(self.header.trace_id, n, "claim broken at trace end", "every request settled once or in flight", problem, "", "")
            return ReplayResult(self.header.trace_id, "violation", n, d, actions=self.actions())
        return ReplayResult(self.header.trace_id, "conformant", n, actions=self.actions())

    def actions(self) -> tuple[tuple[str, int], ...]:
        """(kind, count) of the events replayed so far."""
        return tuple(sorted(self.counts.items()))

    def finish(self) -> str | None:
        """At trace end: conservation (every request settled or still in flight); a message if broken."""
        live = in_flight(self.state)
        arrived = self.state.next_request_id - 1
        settled = self.history.answered | self.history.silent
        if len(live) + len(settled) != arrived or live & settled:
            return (
                f"every_request_is_in_exactly_one_place: {arrived} arrived, {len(settled)} settled, "
                f"{len(live)} in flight, {len(live & settled)} both"
            )
        return None


def _code_name(code: int) -> str:
    try:
        return ResponseCode(code).name
    except ValueError:
        return str(code)


def _same_responses(written: tuple[Response, ...], observed: list[tuple[int | None, int, str | None]]) -> bool:
    """Same requests, codes and remarks, in order; a spec remark of None (an exception's text) matches any."""
    if len(written) != len(observed):
        return False
    for r, (rid, code, remark) in zip(written, observed):
        if rid != r.request_id or code != int(r.code):
            return False
        if r.remark is not None and remark != r.remark:
            return False
    return True


def not_replayable(header: TraceHeader, note: str = "") -> ReplayResult:
    """The result for a trace observed below ``full``: the replay cannot judge it."""
    reason = f"replay needs observation 'full'; this trace is {header.observation.value!r}{note}"
    return ReplayResult(header.trace_id, "inconclusive", 0, reason=reason)


def replay_trace(header: TraceHeader, events: Iterable[Mapping[str, Any]]) -> ReplayResult:
    """Replay one trace's events (in seq order) against its header."""
    return replay_segment(header, events, first_seq=1, last=True)


class SegmentReplay:
    """One segment of one trace, fed its events in seq order: it follows the events before
    ``first_seq`` and checks the rest (see :func:`replay_segment`). Feeding stops mattering once
    :attr:`result` is set; :meth:`end` gives the result after the segment's last event."""

    def __init__(self, header: TraceHeader, first_seq: int, last: bool) -> None:
        self.replayer = Replayer(header)
        self.first_seq = first_seq
        self.last = last
        self.checked = 0
        self.result: ReplayResult | None = None

    def feed(self, record: Mapping[str, Any]) -> None:
        """Take the next event record (ignored once the segment has a result)."""
        action = None if record["kind"] == RESPONSE_KIND else action_from_record(record)
        if self.take(record["seq"], record["kind"], record["ts"], action, record.get("request_id"), responses_from_record(record)):
            self.add_record(record)

    def take(
        self, seq: int, kind: str, ts: int, action: Action | None, opaque: int | None, responses: Sequence[RecordedResponse]
    ) -> bool:
        """Take the next event, given by its fields (see :meth:`Replayer.apply`; ignored once the
        segment has a result); True if it diverged, and then the caller adds its raw record with
        :meth:`add_record` (only the caller holds it, and only a divergence needs it)."""
        if self.result is not None:
            return False
        if seq < self.first_seq:
            if not self.replayer.follow(ts, action, opaque):
                self.result = ReplayResult(self.replayer.header.trace_id, UNREACHED, 0, reason=f"seq {seq} could not be followed")
            return False
        self.checked += 1
        divergence = self.replayer.apply(seq, kind, ts, action, opaque, responses)
        if divergence is None:
            return False
        self.result = ReplayResult(self.replayer.header.trace_id, "violation", self.checked, divergence, actions=self.replayer.actions())
        return True

    def add_record(self, record: Mapping[str, Any]) -> None:
        """Put the raw record of the event that diverged into the result's divergence."""
        assert self.result is not None and self.result.divergence is not None
        # dataclasses.replace: compiled by mypyc, a result has no instance dictionary for spec.frozen.replace.
        divergence = dataclasses.replace(self.result.divergence, record=_record_text(record))
        self.result = dataclasses.replace(self.result, divergence=divergence)

    def end(self) -> ReplayResult:
        """The segment's result, its events all fed."""
        return self.result or self.replayer.conclude(self.checked, self.last)


def feed_segments(events: EventColumns, segments: Mapping[str, tuple[int, SegmentReplay]]) -> Iterator[str]:
    """Give each event (of several traces, each in seq order) to its trace's open segment, which
    takes the events before its ``end_seq``; a trace id as soon as its segment is decided or has had
    its last event (the caller takes the result and closes the segment). Here, not in the task's
    own loop, so that it runs compiled with the replayer (:mod:`traces.compiled`)."""
    seqs, kinds, times, actions, opaques, responses = events.seqs, events.kinds, events.times, events.actions, events.opaques, events.responses
    for i, trace_id in enumerate(events.trace_ids):
        segment = segments.get(trace_id)
        if segment is None:  # no open segment of this trace
            continue
        end_seq, replay = segment
        seq = seqs[i]
        if seq < end_seq and replay.take(seq, kinds[i], times[i], actions[i], opaques[i], responses.get(i, ())):
            replay.add_record(events.record(i))
        if replay.result is not None or seq >= end_seq - 1:
            yield trace_id


def replay_segment(header: TraceHeader, events: Iterable[Mapping[str, Any]], first_seq: int, last: bool) -> ReplayResult:
    """Check the events with ``seq >= first_seq``, after following (not checking) the earlier ones.

    This is how one long trace is replayed on several cores: it is cut into segments, and the
    worker of each segment is given every event up to the segment's end. It follows the events
    before ``first_seq`` (:meth:`Replayer.follow`: the spec's step only) to reach the state the
    segment starts from, then checks its own events in full. Following is exact, so the state is
    the one an unsegmented replay would have; if an earlier event cannot be followed, the
    segment that holds it reports the divergence, and this one says it was not reached.
    Only the ``last`` segment checks the end-of-trace claim. :func:`merge_segments` makes one
    verdict of the segments'.
    """
    if header.observation is not Observation.FULL:
        return not_replayable(header, f" ({sum(1 for _ in events)} events not replayed)")
    segment = SegmentReplay(header, first_seq, last)
    for record in events:
        segment.feed(record)
        if segment.result is not None:
            break
    return segment.end()


def merge_segments(results: Sequence[ReplayResult]) -> ReplayResult:
    """One trace's result from its segments' results, in segment order: the first that is not conformant decides."""
    events = 0
    counts: Counter[str] = Counter()
    for r in results:
        events += r.events
        counts.update(dict(r.actions))
        if r.verdict == UNREACHED:
            # An earlier segment accepted every event this one could not follow: they disagree,
            # which exact following rules out; say so rather than guess a verdict.
            return ReplayResult(
                r.trace_id,
                "inconclusive",
                events,
                reason=f"segments disagree: {r.reason}, though the earlier segments accepted it; replay this trace unsegmented",
                actions=tuple(sorted(counts.items())),
            )
        if r.verdict != "conformant":
            return dataclasses.replace(r, events=events, actions=tuple(sorted(counts.items())))  # as in add_record
    return ReplayResult(results[0].trace_id, "conformant", events, actions=tuple(sorted(counts.items())))


def replay_records(records: Iterable[Mapping[str, Any]]) -> Iterator[ReplayResult]:
    """Replay every trace of a validated record stream (traces may interleave); one result per trace."""
    replays: dict[str, SegmentReplay | ReplayResult] = {}
    for record in records:
        trace_id = record["trace_id"]
        if record["kind"] == HEADER_KIND:
            header = header_from_record(record)
            full = header.observation is Observation.FULL
            replays[trace_id] = SegmentReplay(header, first_seq=1, last=True) if full else not_replayable(header)
        elif isinstance(current := replays[trace_id], SegmentReplay):
            current.feed(record)
    for current in replays.values():
        yield current if isinstance(current, ReplayResult) else current.end()
