"""Replay: every event of a trace through the spec's ``enabled`` / ``step``, comparing responses.

For each event the replayer builds the spec action, advances the spec's clock to the event's
``ts`` (a trace need not record ``ClockAdvances``: a Java broker's clock moves on its own),
checks the guard, takes the step, and compares the responses the spec wrote in that step with
the ones the event records (code and remark; opaques mapped to the spec's sequential ids). It
also checks the spec's state claims and monitors after every step. The first divergence
stops the trace and is explained: the event, expected against observed, and the state fields
that matter.

The spec's state holds no history (a step's responses are its outputs), so it stays as small as
the broker's and each step costs the same at the start and at the end of a long trace.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spec.actors import Action
from spec.environment import ClockAdvances
from spec.remoting import RequestArrives
from spec.codes import ResponseCode
from spec.config import BrokerConfig
from spec.invariants import MONITORS, STATE_CLAIMS, broken_state_claims, known_defects
from spec.machine import ActionNotEnabled, step
from spec.state import NO_OUTPUTS, BrokerState, Outputs, Response, initial_state, written_as
from properties.steptable import changed_fields
from traces.checking.explain import not_enabled, with_opaques
from traces.checking.exits import CheckerFailure
from traces.format.records import (
    HEADER_KIND,
    RESPONSE_KIND,
    action_from_record,
    record_text,
    EventColumns,
    header_from_record,
    Observation,
    RecordedResponse,
    responses_from_record,
    TraceHeader,
)

#: The state fields each state claim reads (``tests/test_claim_reads.py`` watches every attribute
#: each claim reads over reachable states and fails if one is missing here). A step that leaves
#: all of a claim's fields unchanged (the same objects) cannot change its verdict, so the replay
#: re-checks a claim only after a step that touched what it reads: two steps in three of the
#: bench's traces touch none.
CLAIM_READS: dict[str, frozenset[str]] = {
    "no_queue_exceeds_its_capacity": frozenset({"executors"}),
    "at_most_one_writer_holds_the_put_lock": frozenset({"executors", "lock"}),
    "begin_time_is_zero_when_lock_is_free": frozenset({"lock"}),
    "lent_and_available_buffers_partition_the_pool": frozenset({"available_buffers", "files"}),
    "pool_is_deficient_exactly_when_none_is_available": frozenset({"available_buffers"}),
}
#: The state claims as (name, check, reads), read once rather than per step.
_STATE_CHECKS = tuple((c.name, c.check, CLAIM_READS[c.name]) for c in STATE_CLAIMS)
#: Every state field some state claim reads: the only fields a step's change of is worth looking for.
_CLAIM_FIELDS = tuple(sorted(frozenset().union(*CLAIM_READS.values())))
#: The monitors as (name, check).
_MONITOR_CHECKS = tuple((c.name, c.check) for c in MONITORS)
#: A segment's verdict when an event before it could not be followed (see :func:`replay_segment`).
UNREACHED = "unreached"


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
    findings: tuple[ClaimFinding, ...] = ()  # claims the run broke, first break each


@dataclass(frozen=True)
class ClaimFinding:
    """A claim the replayed run broke. The replay goes on: whether the trace follows the spec of its
    release and which claims it breaks are two questions."""

    claim: str
    seq: int  # the first event after which it was broken
    known: bool  # a defect of the trace's release itself (spec.invariants.known_defects)
    change: str  # what that event's step changed, before -> after


class Replayer:
    """Replays one trace, event by event; holds the spec state and the opaque ↔ id map."""

    def __init__(self, header: TraceHeader) -> None:
        self.header = header
        self.config: BrokerConfig = header.config
        self.state = initial_state(self.config)
        # The claims are re-checked only where a step changes what they read: check them all once.
        assert not broken_state_claims(self.config, self.state), "the spec's initial state breaks its own claims"
        self.opaque_of: dict[int, int] = {}  # spec request id -> opaque
        self.id_of: dict[int, int] = {}  # opaque -> spec request id
        self.counts: dict[str, int] = {}
        self.known = known_defects(self.config.profile)
        self.findings: dict[str, ClaimFinding] = {}
        self.unexpected: Divergence | None = None  # the first break of a claim the release keeps

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
            after, out = step(self.config, s, action)  # the guard is checked once, by step
        except ActionNotEnabled:
            expected, why, state = not_enabled(self.config, s, action, self.opaque_of)
            return self._divergence(seq, "not enabled", expected, why, state)
        if isinstance(action, RequestArrives):
            assert opaque is not None  # validation: a RequestArrives carries its request_id
            if opaque in self.id_of:
                return self._divergence(seq, "opaque reused", "a fresh opaque", f"opaque {opaque} again", "")
            self._number(opaque, s)
        if ts != after.now:
            return self._divergence(seq, "clock differs", f"ts = {after.now}", f"ts = {ts}", "")
        written = out.responses
        if (written or responses) and not written_as(written, observed := self._recorded(responses)):
            return self._divergence(
                seq,
                "responses differ",
                self._show((r.request_id, int(r.code), r.remark) for r in written),
                self._show(observed),
                with_opaques("; ".join(f"{n}: {b} -> {a}" for n, b, a in changed_fields(s, after)), self.opaque_of),
            )
        for claim in self._broken_claims(s, action, after, out):
            if claim not in self.findings:
                change = with_opaques("; ".join(f"{n}: {b} -> {a}" for n, b, a in changed_fields(s, after)), self.opaque_of)
                self.findings[claim] = ClaimFinding(claim, seq, claim in self.known, change)
                if claim not in self.known and self.unexpected is None:
                    self.unexpected = self._divergence(seq, "claim broken", "every claim the release keeps holds", claim, change)
        self._advance(after)
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
            after, _ = step(self.config, s, action)
        except ActionNotEnabled:
            return False
        if isinstance(action, RequestArrives):
            assert opaque is not None  # validation: a RequestArrives carries its request_id
            self._number(opaque, s)
        self._advance(after)
        return True

    def _clock_to(self, ts: int, action: Action) -> BrokerState:
        """The state with the clock moved to the event's ``ts`` (a trace need not record ClockAdvances)."""
        s = self.state
        if ts > s.now and not isinstance(action, ClockAdvances):
            s, _ = step(self.config, s, ClockAdvances(ts - s.now))
        return s

    def _number(self, opaque: int, before: BrokerState) -> None:
        """Map an arriving request's opaque to the id the spec gave it (its ``next_request_id`` before the step)."""
        self.id_of[opaque] = before.next_request_id
        self.opaque_of[before.next_request_id] = opaque

    def _advance(self, after: BrokerState) -> None:
        """Make ``after`` the current state."""
        self.state = after

    def _broken_claims(self, before: BrokerState, action: Action, after: BrokerState, out: Outputs) -> list[str]:
        # Only what the step touched is re-checked: a state claim whose fields (CLAIM_READS) are
        # the same objects as in the last checked state has the same verdict. Only the fields the
        # claims read are compared, not all of them.
        last, now = vars(self.state), vars(after)
        changed = {name for name in _CLAIM_FIELDS if last[name] is not now[name]}
        broken = [name for name, check, reads in _STATE_CHECKS if not reads.isdisjoint(changed) and not check(self.config, after)]
        # The monitors watch requests entering and leaving the broker and the responses written;
        # a step with no outputs that admits no request only moves requests between places the
        # spec's effects keep consistent (every monitor is checked on every step by exploration
        # and the lockstep suites), so the replay checks them where something was output or arrived.
        if out is not NO_OUTPUTS or after.next_request_id != before.next_request_id:
            broken += [name for name, check in _MONITOR_CHECKS if not check(self.config, before, action, after, out)]
        return broken

    def conclude(self, n: int) -> ReplayResult:
        """The result after ``n`` checked events the spec followed: a violation if a claim the release
        keeps was broken, else conformant; every broken claim is a finding either way."""
        verdict = "conformant" if self.unexpected is None else "violation"
        return ReplayResult(self.header.trace_id, verdict, n, self.unexpected, actions=self.actions(), findings=self.result_findings())

    def result_findings(self) -> tuple[ClaimFinding, ...]:
        """The claims broken so far, in the order they broke."""
        return tuple(sorted(self.findings.values(), key=lambda f: f.seq))

    def actions(self) -> tuple[tuple[str, int], ...]:
        """(kind, count) of the events replayed so far."""
        return tuple(sorted(self.counts.items()))


def _code_name(code: int) -> str:
    try:
        return ResponseCode(code).name
    except ValueError:
        return str(code)


def not_replayable(header: TraceHeader, note: str = "") -> ReplayResult:
    """The result for a trace observed below ``full``: the replay cannot judge it."""
    reason = f"replay needs observation 'full'; this trace is {header.observation.value!r}{note}"
    return ReplayResult(header.trace_id, "inconclusive", 0, reason=reason)


def replay_trace(header: TraceHeader, events: Iterable[Mapping[str, Any]]) -> ReplayResult:
    """Replay one trace's events (in seq order) against its header."""
    return replay_segment(header, events, first_seq=1)


class SegmentReplay:
    """One segment of one trace, fed its events in seq order: it follows the events before
    ``first_seq`` and checks the rest (see :func:`replay_segment`). Feeding stops mattering once
    :attr:`result` is set; :meth:`end` gives the result after the segment's last event."""

    def __init__(self, header: TraceHeader, first_seq: int) -> None:
        self.replayer = Replayer(header)
        self.first_seq = first_seq
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
        segment has a result); True if it diverged or first broke a claim the release keeps, and then
        the caller adds its raw record with :meth:`add_record` (only the caller holds it, and only
        a divergence needs it)."""
        if self.result is not None:
            return False
        if seq < self.first_seq:
            if not self.replayer.follow(ts, action, opaque):
                self.result = ReplayResult(self.replayer.header.trace_id, UNREACHED, 0, reason=f"seq {seq} could not be followed")
            return False
        self.checked += 1
        divergence = self.replayer.apply(seq, kind, ts, action, opaque, responses)
        if divergence is None:
            unexpected = self.replayer.unexpected
            return unexpected is not None and unexpected.seq == seq and not unexpected.record
        self.result = ReplayResult(
            self.replayer.header.trace_id,
            "violation",
            self.checked,
            divergence,
            actions=self.replayer.actions(),
            findings=self.replayer.result_findings(),
        )
        return True

    def add_record(self, record: Mapping[str, Any]) -> None:
        """Put the raw record of the event that diverged (or first broke a claim) into its divergence."""
        # dataclasses.replace: compiled by mypyc, a result has no instance dictionary for spec.frozen.replace.
        if self.result is None:
            assert self.replayer.unexpected is not None
            self.replayer.unexpected = dataclasses.replace(self.replayer.unexpected, record=record_text(record))
            return
        assert self.result.divergence is not None
        divergence = dataclasses.replace(self.result.divergence, record=record_text(record))
        self.result = dataclasses.replace(self.result, divergence=divergence)

    def end(self) -> ReplayResult:
        """The segment's result, its events all fed."""
        return self.result or self.replayer.conclude(self.checked)


def feed_segments(events: EventColumns, segments: Mapping[str, tuple[int, SegmentReplay]]) -> Iterator[str]:
    """Give each event (of several traces, each in seq order) to its trace's open segment, which
    takes the events before its ``end_seq``; a trace id as soon as its segment is decided or has had
    its last event (the caller takes the result and closes the segment). Here, not in the task's
    own loop, so that it runs compiled with the replayer (:mod:`traces.checking.compiled`)."""
    seqs, kinds, times, actions, opaques, responses = events.seqs, events.kinds, events.times, events.actions, events.opaques, events.responses
    for i, trace_id in enumerate(events.trace_ids):
        segment = segments.get(trace_id)
        if segment is None:  # no open segment of this trace
            continue
        end_seq, replay = segment
        seq = seqs[i]
        try:
            taken = seq < end_seq and replay.take(seq, kinds[i], times[i], actions[i], opaques[i], responses.get(i, ()))
        except Exception as e:
            raise CheckerFailure(trace_id, e, seq) from e
        if taken:
            replay.add_record(events.record(i))
        if replay.result is not None or seq >= end_seq - 1:
            yield trace_id


def replay_segment(header: TraceHeader, events: Iterable[Mapping[str, Any]], first_seq: int) -> ReplayResult:
    """Check the events with ``seq >= first_seq``, after following (not checking) the earlier ones.

    This is how one long trace is replayed on several cores: it is cut into segments, and the
    worker of each segment is given every event up to the segment's end. It follows the events
    before ``first_seq`` (:meth:`Replayer.follow`: the spec's step only) to reach the state the
    segment starts from, then checks its own events in full. Following is exact, so the state is
    the one an unsegmented replay would have; if an earlier event cannot be followed, the
    segment that holds it reports the divergence, and this one says it was not reached.
    :func:`merge_segments` makes one
    verdict of the segments'.
    """
    if header.observation is not Observation.FULL:
        return not_replayable(header, f" ({sum(1 for _ in events)} events not replayed)")
    segment = SegmentReplay(header, first_seq)
    for record in events:
        segment.feed(record)
        if segment.result is not None:
            break
    return segment.end()


def merge_segments(results: Sequence[ReplayResult]) -> ReplayResult:
    """One trace's result from its segments' results, in segment order: the first divergence that
    stopped a segment decides; else the first claim the release keeps that a segment saw broken;
    the findings are every segment's, up to a stop."""
    events = 0
    counts: Counter[str] = Counter()
    findings: dict[str, ClaimFinding] = {}
    claimed: ReplayResult | None = None  # the first segment that broke a claim the release keeps
    for r in results:
        events += r.events
        counts.update(dict(r.actions))
        for f in r.findings:
            findings.setdefault(f.claim, f)
        actions = tuple(sorted(counts.items()))
        if r.verdict == UNREACHED:
            # An earlier segment accepted every event this one could not follow: they disagree,
            # which exact following rules out; say so rather than guess a verdict.
            return ReplayResult(
                r.trace_id,
                "inconclusive",
                events,
                reason=f"segments disagree: {r.reason}, though the earlier segments accepted it; replay this trace unsegmented",
                actions=actions,
            )
        if r.verdict != "conformant":
            if r.divergence is None or r.divergence.kind != "claim broken":  # the spec could not follow: stop here
                return dataclasses.replace(r, events=events, actions=actions, findings=tuple(findings.values()))  # as in add_record
            claimed = claimed or r
    merged = tuple(sorted(findings.values(), key=lambda f: f.seq))
    if claimed is not None:
        return dataclasses.replace(claimed, events=events, actions=tuple(sorted(counts.items())), findings=merged)
    return ReplayResult(results[0].trace_id, "conformant", events, actions=tuple(sorted(counts.items())), findings=merged)


def replay_records(records: Iterable[Mapping[str, Any]]) -> Iterator[ReplayResult]:
    """Replay every trace of a validated record stream (traces may interleave); one result per trace."""
    replays: dict[str, SegmentReplay | ReplayResult] = {}
    for record in records:
        trace_id = record["trace_id"]
        if record["kind"] == HEADER_KIND:
            header = header_from_record(record)
            full = header.observation is Observation.FULL
            replays[trace_id] = SegmentReplay(header, first_seq=1) if full else not_replayable(header)
        elif isinstance(current := replays[trace_id], SegmentReplay):
            current.feed(record)
    for current in replays.values():
        yield current if isinstance(current, ReplayResult) else current.end()
