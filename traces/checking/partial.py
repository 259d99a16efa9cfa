"""The partial replay: is there a run of the spec whose observable part is this trace?

A trace observed at ``queues`` or ``black-box`` level leaves steps out: the put path, the commit
service and the HA service at ``queues``; everything but arrivals and the responses on the wire
at ``black-box`` (:data:`traces.format.records.LEVEL_KINDS`). The replay keeps the set of spec
states that can explain the trace so far (*candidates*, deduplicated: the spec's state holds no
history, so runs that leave the broker alike coincide) and, for each observed event:

1. *saturates* the candidates with the hidden steps the spec allows before the event's ``ts``:
   hidden thread steps that write nothing, and time passing;
2. keeps the candidates in which the event is a step the spec allows, writing exactly the
   responses the event records. A ``Response`` event is a hidden step that wrote that response
   (a send's SUCCESS, written inside the put path at ``queues``; any answer at ``black-box``).
   A hidden step that writes a response happens only as such an event: the wire shows every
   response, so one written where the trace shows none is not a run of this trace.

Time. Hidden steps may happen at any millisecond between two observed events, and where they
happen matters (a writer stamps ``beginTimeInLock`` with the time it takes the lock; a task is
stamped when it is created). The saturation explores that exactly: while a hidden thread step is
enabled, time advances one millisecond at a time, and each millisecond is a branch. When no hidden
step is enabled, nothing hidden can happen until a guard that reads the clock changes: the next
fast-failure run (hidden at ``black-box`` only); the other clock guards come in complementary
pairs on a thread that already has a step enabled (busy or not at the put check and at dispatch,
admit or throttle at the limiter). So the clock jumps straight to the next fast-failure run or
the event's ``ts``, whichever is first: no run is lost, and idle gaps cost one step.

At ``black-box`` that set explodes after a few events (every hidden thread moves independently,
at any millisecond); at ``queues`` it stays small, but every event still costs the hidden steps
of every candidate (tens of spec steps an event). So the witness-first search of
:mod:`traces.checking.witness` runs first, with a share of the budgets
(``Budgets.share``): it follows one run at a time, steered by the trace, and can only
return a witness. When it finds none, this exhaustive search decides, keeping only one
representative of each class of states that the trace cannot tell apart
(:mod:`traces.checking.reduction`: interchangeable threads at ``black-box``, stamps and lock
times that only a cleaner's or a busy answer could reveal); its docstring says why no run is lost.

Verdicts. *conformant* comes with a witness: the full run of the spec the search found, which
:func:`witness_records` writes as a ``full`` trace that the ordinary replay accepts. *violation*
only when the search was exhaustive and no candidate is left: the result names the first event no
candidate explains and shows the candidates it had. *inconclusive* when a budget ran out
(:class:`Budgets`): the result names the budget and the event.

The environment. Requests arrive only as the trace says. Of the other environment steps, the
search proposes exactly those the trace's header declares (``environment``,
:meth:`traces.format.records.TraceHeader.hidden_environment`; absent: an exception inside the put
lock) and the level hides: HA appends and exceptions in the lock at ``queues``, where operator
changes, foreign tasks and the limiter failing open are events matched from the trace; all of them
at ``black-box``. A run that needs an undeclared hidden step is no run of this trace. None of
these steps reads the clock, so the time abstraction above holds; the witness-first search tries
the declaration's narrowest part first (:func:`witness_environments`), and not at all a part under
which the arrivals and answers alone rule the trace out (:mod:`traces.checking.necessary`).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from spec.actors import Action, IoThreadStep, WorkerStep
from spec.config import BrokerConfig
from spec.environment import ClockAdvances
from spec.frozen import replace
from spec.fastfailure import FastFailureStartsRun
from spec.machine import RULES, Effect, Environment, Guard, candidate_actions
from spec.profiles import ExecutorName
from spec.remoting import STEP_STAGES as IO_STEP_STAGES, RequestArrives
from spec.state import BrokerState, FastFailurePhase, IoStage, Response, WorkerStage, initial_state, written_as
from spec.workers import STEP_STAGES as WORKER_STEP_STAGES
from properties.steptable import describe_action
from traces.checking.explain import not_enabled
from traces.checking.layout import Layout, Unit, read_unit
from traces.checking.necessary import Impossible, first_impossible
from traces.checking.reduction import Reduction, Representatives
from traces.checking.replay import Divergence, ReplayResult
from traces.checking.segments import result_from_json, result_json
if TYPE_CHECKING:
    from pyspark.sql import SparkSession

from traces.checking.exits import CheckerFailure
from traces.format.records import (
    EVENT_COLUMNS,
    HEADER_KIND,
    LEVEL_KINDS,
    REPEATED_STRINGS,
    RESPONSE_KIND,
    action_from_record,
    event_record,
    EventColumns,
    header_from_record,
    header_record,
    environment_to_json,
    Observation,
    QUIET_ENVIRONMENT,
    RecordedResponse,
    responses_from_record,
    TraceHeader,
)

@dataclass(frozen=True)
class Budgets:
    """Limits of one trace's search; running out makes the verdict inconclusive, never a violation."""

    candidates: int = 20_000  # candidate states kept after any one event
    steps: int = 5_000_000  # spec steps tried over the whole trace
    seconds: float = 120.0  # wall time for the trace
    witness_share: float | None = None  # of the steps and time, what the witness-first search may use before the exhaustive one (None: by level)

    def share(self, level: Observation) -> float:
        """The witness-first search's share at ``level``: :attr:`witness_share`, or by default :data:`WITNESS_SHARES`."""
        return WITNESS_SHARES[level] if self.witness_share is None else self.witness_share


#: The witness-first search's share of the budgets by default. At ``queues`` the exhaustive search
#: keeps a few candidates an event (the bench's median of medians is 1) and decides violations, so
#: it keeps three quarters. At ``black-box`` its candidate set explodes within the first events:
#: on the bench's base traces it reaches 100,000 states while saturating before seq 6, in about 6 s
#: (``Budgets(candidates=5_000, witness_share=0)``), and the violations of the broken examples that
#: it decides itself it decides within 0.05 s, the others being read off the arrivals and answers
#: before any search (:mod:`traces.checking.necessary`); so there the witness-first search, which
#: follows one run however long the trace, takes three quarters.
WITNESS_SHARES = {Observation.QUEUES: 0.25, Observation.BLACK_BOX: 0.75}


class Trail:
    """A candidate's history: the step that reached it, and the trail before (a shared linked list).

    Never changed once built. A plain class, not a frozen dataclass: the searches build one for
    almost every state they reach, and compiled by mypyc a frozen dataclass took about 550 ns to
    build, this class 115 ns (``timeit`` of ``Trail(None, ClockAdvances(1), 1, ())`` with either build)."""

    def __init__(self, previous: Trail | None, action: Action, ts: int, responses: tuple[RecordedResponse, ...]) -> None:
        self.previous = previous
        self.action = action
        self.ts = ts
        self.responses = responses  # as the trace recorded them (a processor's own answer is its code, not the spec's stand-in)


@dataclass(frozen=True)
class PartialResult:
    """The outcome of the partial replay of one trace."""

    trace_id: str
    verdict: str  # "conformant" | "violation" | "inconclusive"
    events: int  # observed events explained
    max_candidates: int  # the largest candidate set after an event
    median_candidates: float
    steps: int  # spec steps tried
    detail: str = ""  # the violation or the budget that ran out, for a person
    witness: tuple[tuple[Action, int, tuple[RecordedResponse, ...]], ...] = ()  # (action, ts, responses) of a full run
    opaques: tuple[int, ...] = ()  # the trace's opaque of each request, in arrival order
    search: str = "exhaustive search"  # which search decided; for the witness-first one, the candidates are the states it searched at each event


class _Offered:
    """The hidden actions a shape of state offers (:meth:`PartialReplay._hidden_candidates`), each
    with its guard and effect, and indexed by the stage its guard reads first: a worker's steps by
    executor, worker and stage (:data:`spec.workers.STEP_STAGES`), a remoting thread's by thread
    and stage (:data:`spec.remoting.STEP_STAGES`), the rest (fast failure, the commit service,
    faults, the environment) in ``others``. Of the 54 actions a state of the bench's bursts trace
    offers, 27 are its workers' and 16 its remoting threads', and about 4 are enabled. Each
    indexed entry keeps its place in :attr:`actions`, so that the enabled ones come out in that
    order (the witness search orders a node's children by it where their urgencies tie)."""

    def __init__(self, actions: list[tuple[Action, Guard, Effect]]) -> None:
        self.actions = actions
        self.others: list[tuple[int, Action, Guard, Effect]] = []
        self.of_worker: dict[tuple[ExecutorName, int, WorkerStage], list[tuple[int, Action, Guard, Effect]]] = {}
        self.of_io_thread: dict[tuple[int, IoStage], list[tuple[int, Action, Guard, Effect]]] = {}
        for n, (a, guard, effect) in enumerate(actions):
            entry = (n, a, guard, effect)
            if isinstance(a, WorkerStep):
                for stage in WORKER_STEP_STAGES[type(a)]:
                    self.of_worker.setdefault((a.executor, a.worker, stage), []).append(entry)
            elif isinstance(a, IoThreadStep):
                for io_stage in IO_STEP_STAGES[type(a)]:
                    self.of_io_thread.setdefault((a.io_thread, io_stage), []).append(entry)
            else:
                self.others.append(entry)


class OutOfBudget(Exception):
    """A budget of :class:`Budgets` ran out; the message names it."""


class PartialReplay:
    """The search over one trace (see the module docstring)."""

    def __init__(
        self, header: TraceHeader, budgets: Budgets = Budgets(), reduction: Reduction | None = None, environment: Environment | None = None
    ) -> None:
        if header.observation is Observation.FULL:
            raise ValueError("the partial replay is for traces below 'full'; use the replay")
        self.header = header
        self.config: BrokerConfig = header.config
        self.budgets = budgets
        visible = LEVEL_KINDS[header.observation]
        #: The guard and effect of each action kind the level leaves out.
        self.hidden_rules = {cls: rule for cls, rule in RULES.items() if cls.__name__ not in visible}
        self.hidden_by_shape: dict[object, _Offered] = {}
        #: What the outside world may do unseen: the trace's declaration (or the part of it the
        #: caller names: :func:`witness_environments`), without requests or clock (the trace's own
        #: events); of it, the search proposes only the actions the level hides.
        self.environment: Environment = header.hidden_environment() if environment is None else environment
        self.candidates: dict[BrokerState, Trail | None] = {initial_state(self.config): None}
        self.id_of: dict[int, int] = {}  # opaque -> the spec's request id (arrivals are always visible)
        self.opaque_of: dict[int, int] = {}
        self.steps = 0
        self.sizes: list[int] = []
        self.events = 0
        self.step_limit = budgets.steps  # the current phase's share of the budgets
        self.step_share = budgets.steps  # the spec steps the current search may take in all, for the message
        self.shared_by = ""  # who else takes from that share, for the message (", shared by ...")
        self.deadline = time.monotonic() + budgets.seconds
        self.deadline_seconds = budgets.seconds  # what the current deadline allows, for the message
        #: Which candidates the exhaustive search may drop (:mod:`traces.checking.reduction`); None:
        #: none (also for a reduction that can put no two states in one class: its keys would cost time for nothing).
        self.reduction = reduction if reduction is not None and reduction.drops_anything else None

    # -- the search ------------------------------------------------------------------------------

    def _count_step(self) -> None:
        self.steps += 1
        if self.steps > self.step_limit:
            raise OutOfBudget(f"steps budget ({self.step_share} spec steps{self.shared_by}) ran out")

    def step(self, s: BrokerState, a: Action) -> tuple[BrokerState, tuple[Response, ...]] | None:
        """``a`` taken in ``s`` with what it wrote, or None if it is not enabled there."""
        guard, effect = RULES[type(a)]
        if not guard(self.config, s, a):
            return None
        self._count_step()
        after, out = effect(self.config, s, a)
        return after, out.responses

    def _hidden_candidates(self, s: BrokerState) -> _Offered:
        """The hidden actions of ``s``'s threads and of the environment the trace declares
        (:attr:`environment`), with their rules. That environment sends no request and leaves the
        clock to the search, so the candidates depend only on which threads and queues there are
        and on whether a foreign task may still come: they are listed once per such shape."""
        env = self.environment
        shape = (
            len(s.io_threads),
            tuple((e.name, len(e.workers)) for e in s.executors),
            tuple(q for q, _ in s.queue_waits),
            s.next_foreign_id <= env.max_foreign_tasks,
        )
        found = self.hidden_by_shape.get(shape)
        if found is None:
            found = self.hidden_by_shape[shape] = _Offered(
                [(a, *self.hidden_rules[type(a)]) for a in candidate_actions(self.config, s, env) if type(a) in self.hidden_rules]
            )
        return found

    def hidden_steps(self, s: BrokerState) -> Iterator[tuple[Action, BrokerState, tuple[Response, ...]]]:
        """Each hidden step enabled in ``s``, with the state after it and what it wrote (each guard read once)."""
        for a, effect in self.enabled_hidden(s):
            yield a, *self.take(s, a, effect)

    def enabled_hidden(self, s: BrokerState) -> list[tuple[Action, Effect]]:
        """Each hidden action enabled in ``s``, with its effect, not yet taken (:meth:`take`), in
        the order of the shape's list. A thread's steps are tried only where its stage offers
        them (:class:`_Offered`); the guard of every other step of it is false."""
        offered = self._hidden_candidates(s)
        config = self.config
        found: list[tuple[int, Action, Effect]] = []
        for n, a, guard, effect in offered.others:
            if guard(config, s, a):
                found.append((n, a, effect))
        for e in s.executors:
            for w, worker in enumerate(e.workers):
                for n, a, guard, effect in offered.of_worker.get((e.name, w, worker.stage), ()):
                    if guard(config, s, a):
                        found.append((n, a, effect))
        for i, io in enumerate(s.io_threads):
            for n, a, guard, effect in offered.of_io_thread.get((i, io.stage), ()):
                if guard(config, s, a):
                    found.append((n, a, effect))
        found.sort()  # by place: no two share one
        return [(a, effect) for _, a, effect in found]

    def take(self, s: BrokerState, a: Action, effect: Effect) -> tuple[BrokerState, tuple[Response, ...]]:
        """The enabled action ``a`` taken in ``s`` by its effect: the state after it and what it wrote."""
        self._count_step()
        after, out = effect(self.config, s, a)
        return after, out.responses

    def clock_guard_due(self, s: BrokerState) -> int | None:
        """When a hidden step could next become enabled by time alone: a due fast-failure run, if hidden."""
        if s.fast_failure_phase is FastFailurePhase.IDLE and FastFailureStartsRun in self.hidden_rules:
            return s.fast_failure_next_run
        return None

    def _representatives(self) -> Representatives | None:
        return None if self.reduction is None else Representatives(self.reduction)

    def _saturate(self, ts: int) -> dict[BrokerState, Trail | None]:
        """Every state reachable from the candidates by silent hidden steps and time, up to ``ts``
        (with a reduction, a set of them that simulates every such state)."""
        seen: dict[BrokerState, Trail | None] = dict(self.candidates)
        kept = self._representatives()
        if kept is not None:
            for s in seen:
                kept.admit(s)

        def admit(s: BrokerState) -> bool:
            return s not in seen and (kept is None or kept.admit(s))

        work = list(seen)
        while work:
            if time.monotonic() > self.deadline:
                raise OutOfBudget(f"time budget ({self.deadline_seconds:g} s) ran out")
            s = work.pop()
            if kept is not None and kept.superseded(s):
                continue  # a state admitted since simulates it, and is expanded instead
            node = seen[s]
            moved = False
            for a, after, written in self.hidden_steps(s):
                moved = True
                if not written and admit(after):  # a hidden step that writes must be a Response event
                    seen[after] = Trail(node, a, after.now, ())
                    work.append(after)
            if s.now < ts:
                target = s.now + 1
                if not moved:
                    due = self.clock_guard_due(s)
                    target = ts if due is None or due <= s.now else min(ts, due)
                taken = self.step(s, ClockAdvances(target - s.now))
                if taken is not None and admit(taken[0]):
                    seen[taken[0]] = node
                    work.append(taken[0])
            if len(seen) > self.budgets.candidates * 20:
                raise OutOfBudget(f"candidates budget ({self.budgets.candidates} states) ran out while saturating")
        if kept is not None:
            return {s: seen[s] for s in kept.kept() if s.now == ts}
        return {s: n for s, n in seen.items() if s.now == ts}

    def _observed_actions(self, s: BrokerState, record: Mapping[str, Any]) -> Iterable[Action]:
        """The actions an observed event (not a Response) may be in ``s``."""
        if record["kind"] == RequestArrives.__name__ and record.get("io_thread") is None:  # black-box: any idle thread
            return [RequestArrives(io, *_arrival(record)) for io in range(len(s.io_threads))]
        return [action_from_record(record)]

    def explanations(self, s: BrokerState, record: Mapping[str, Any]) -> Iterator[tuple[Action, BrokerState, tuple[Response, ...]]]:
        """The steps from ``s`` that the event may be, with what each wrote."""
        kind = record["kind"]
        if kind == RESPONSE_KIND:
            yield from self.hidden_steps(s)
            return
        for a in self._observed_actions(s, record):
            taken = self.step(s, a)
            if taken is not None:
                yield a, *taken

    def feed(self, record: Mapping[str, Any]) -> PartialResult | None:
        """Explain one observed event (in seq order); a result once the trace is decided."""
        try:
            pool, kept = self._advance(record)
        except OutOfBudget as e:
            return self._result("inconclusive", f"seq {record['seq']}: {e}")
        if not kept:
            return self._result("violation", self._explain(record, pool, responses_from_record(record)))
        self.candidates = kept
        self.sizes.append(len(kept))
        self.events += 1
        return None

    def _advance(self, record: Mapping[str, Any]) -> tuple[dict[BrokerState, Trail | None], dict[BrokerState, Trail | None]]:
        """The states that may precede the event, and those that follow it: where it is a step
        the spec allows writing the recorded responses."""
        ts: int = record["ts"]
        recorded = responses_from_record(record)
        # A recorded ClockAdvances is the clock's own step: the state before it is ms earlier.
        before = ts - record["ms"] if record["kind"] == ClockAdvances.__name__ else ts
        pool = self._saturate(before)
        if record["kind"] == RequestArrives.__name__:
            self.number(record["request_id"], pool)
        expected = [(self.id_of.get(r.request_id), r.code, r.remark) for r in recorded]
        kept: dict[BrokerState, Trail | None] = {}
        representatives = self._representatives()
        for s, node in pool.items():
            for a, after, written in self.explanations(s, record):
                if written_as(written, expected) and after not in kept and (representatives is None or representatives.admit(after)):
                    kept[after] = Trail(node, a, ts, tuple(recorded))
            if len(kept) > self.budgets.candidates:
                raise OutOfBudget(f"candidates budget ({self.budgets.candidates} states) ran out")
        if representatives is not None:
            return pool, {s: kept[s] for s in representatives.kept()}
        return pool, kept

    def number(self, opaque: int, pool: Iterable[BrokerState]) -> None:
        """Arrivals are visible at every level, so every candidate numbers the request alike."""
        ids = {s.next_request_id for s in pool}
        if len(ids) == 1:
            (spec_id,) = ids
            self.id_of[opaque] = spec_id
            self.opaque_of[spec_id] = opaque

    def end(self) -> PartialResult:
        """The verdict once every event was explained: conformant, with a witness."""
        return self._result("conformant", "")

    # -- results -----------------------------------------------------------------------------------

    def _result(self, verdict: str, detail: str) -> PartialResult:
        sizes = sorted(self.sizes) or [len(self.candidates)]
        witness: tuple[tuple[Action, int, tuple[RecordedResponse, ...]], ...] = ()
        if verdict == "conformant":
            node = next(iter(self.candidates.values()))
            path: list[tuple[Action, int, tuple[RecordedResponse, ...]]] = []
            while node is not None:
                path.append((node.action, node.ts, node.responses))
                node = node.previous
            witness = tuple(reversed(path))
        return PartialResult(
            self.header.trace_id,
            verdict,
            self.events,
            max(sizes),
            float(sizes[len(sizes) // 2]),
            self.steps,
            detail,
            witness,
            tuple(self.opaque_of[i] for i in sorted(self.opaque_of)),
        )

    def _explain(
        self, record: Mapping[str, Any], pool: Mapping[BrokerState, object], recorded: Sequence[RecordedResponse]
    ) -> str:
        """What the event needed, and why each of the first candidates could not give it: the guard
        that failed with the fields it read, or the answers the step would have written instead."""
        needs = "a hidden step writing " if record["kind"] == RESPONSE_KIND else f"{record['kind']} writing "
        answer = "; ".join(f"opaque {r.request_id}: code {r.code} {r.remark!r}" for r in recorded) or "nothing"
        shown = [f"candidate {i} ({_summary(s, self.opaque_of)}): {self._why_not(s, record)}" for i, s in enumerate(list(pool)[:3], 1)]
        return (
            f"seq {record['seq']} ts {record['ts']}: no run of the spec explains it: it needs {needs}{answer}. "
            f"{len(pool)} candidate state(s) at ts {record['ts']}" + ("; " + " | ".join(shown) if shown else "")
        )

    def _why_not(self, s: BrokerState, record: Mapping[str, Any]) -> str:
        """Why the event is no step from ``s``, by the trace's opaques (outside the budgets: the search is over)."""
        if record["kind"] == RESPONSE_KIND:
            writers = [
                f"{describe_action(a)} writes {self._answers(written)}"
                for a, guard, effect in self._hidden_candidates(s).actions
                if guard(self.config, s, a) and (written := effect(self.config, s, a)[1].responses)
            ]
            return "; ".join(writers) if writers else "no hidden step here writes a response"
        reasons = []
        for a in self._observed_actions(s, record):
            guard, effect = RULES[type(a)]
            if guard(self.config, s, a):
                reasons.append(f"{describe_action(a)} writes {self._answers(effect(self.config, s, a)[1].responses)}")
            else:
                expected, observed, fields = not_enabled(self.config, s, a, self.opaque_of)
                reasons.append(f"{observed} (it read {fields or 'no state field'}); {expected}")
        return "; ".join(reasons)

    def _answers(self, written: Sequence[Response]) -> str:
        return ", ".join(f"opaque {self.opaque_of.get(r.request_id, '?')}: code {int(r.code)} {r.remark!r}" for r in written) or "nothing"


def _arrival(record: Mapping[str, Any]) -> tuple[Any, ...]:
    a = action_from_record({**record, "io_thread": 0})
    assert isinstance(a, RequestArrives)
    return a.code, a.topic, a.oneway


def _summary(s: BrokerState, opaque_of: Mapping[int, int]) -> str:
    """The fields a dispatch or a put reads, with each queue's head by the trace's opaque."""
    heads = ", ".join(
        f"{e.name.value} queue {len(e.queue)}"
        + (f" head #{opaque_of.get(q.request.id, '?')}" if (q := e.queue[0] if e.queue else None) is not None and hasattr(q, "request") else "")
        for e in s.executors
    )
    return f"now={s.now} lock={s.lock.holder} begin={s.lock.begin_time_in_lock} pool={len(s.available_buffers)} {heads}"


def replay_partial(header: TraceHeader, events: Iterable[Mapping[str, Any]], budgets: Budgets = Budgets(), reduce: bool = True) -> PartialResult:
    """Search one trace's events (in seq order) against its header: the witness-first search
    first, then (if it found no run) the exhaustive one, within one budget. ``reduce``: the
    exhaustive search drops the states :mod:`traces.checking.reduction` allows (off only to
    compare the two, in tests and measurements)."""
    with _no_cyclic_gc():
        # the witness-first search goes back and forth over the events; the reduction reads ahead
        return _replay_partial(header, list(events), budgets, reduce)


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Python's cyclic garbage collector off for the while. A search allocates many small immutable
    states and keeps those it visited, so the collector would scan a growing heap again and again
    for nothing: states and trails form no cycles, so reference counting frees what the search
    drops (and a cycle made meanwhile is collected once the collector is back on)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _replay_partial(header: TraceHeader, observed: list[Mapping[str, Any]], budgets: Budgets, reduce: bool) -> PartialResult:
    """:func:`replay_partial`'s searches, with the cyclic collector off."""
    from traces.checking.witness import find_witness  # it builds on this module's search

    impossible = first_impossible(header.config, header.hidden_environment(), observed)
    started = time.monotonic()
    steps = 0  # the spec steps the witness-first passes spent
    stopped: list[str] = []  # why each pass found no run
    if impossible is None:
        *narrower, declared = witness_environments(header)
        environments: list[tuple[str, Environment]] = []
        for allowing, environment in narrower:
            ruled_out = first_impossible(header.config, environment, observed)
            if ruled_out is None:
                environments.append((allowing, environment))
            else:  # the wire alone says no run there explains the trace: its pass would search in vain
                stopped.append(f"{allowing}, {_impossible(ruled_out, observed[ruled_out.index])}, so that pass was not searched")
        environments.append(declared)
        share = budgets.share(header.observation)
        until = (int(budgets.steps * share), started + budgets.seconds * share)  # the passes share it
        for passes, (allowing, environment) in zip(range(len(environments), 0, -1), environments):
            witness_first = PartialReplay(header, budgets, environment=environment)
            witness_first.steps = steps
            found = find_witness(witness_first, observed, passes, until)
            if isinstance(found, PartialResult):
                return found
            steps = witness_first.steps
            stopped.append(f"{allowing}, {found}" if stopped else found)  # which pass it was, after the first
    else:  # no run explains the trace; the exhaustive search looks for an earlier event no run explains
        observed = observed[: impossible.index + 1]
    reduction = Reduction(header.config, header.observation, observed) if reduce else None
    search = PartialReplay(header, budgets, reduction)
    search.steps = steps  # the budgets are the trace's, over both searches
    search.deadline = started + budgets.seconds
    result = decide(search, observed)
    if result.verdict == "conformant" and impossible is not None:
        raise RuntimeError(f"a checker defect: a run of the spec explains seq {impossible.seq}, which traces.checking.necessary rules out")
    if result.verdict != "inconclusive":
        return result
    if impossible is not None:
        detail = f"{_impossible(impossible, observed[-1])}; the exhaustive search found no earlier such event before it stopped: {result.detail}"
        return dataclasses.replace(result, verdict="violation", detail=detail)
    return dataclasses.replace(result, detail=f"{result.detail}; before it, " + "; then, ".join(stopped))


def _impossible(impossible: Impossible, record: Mapping[str, Any]) -> str:
    """A violation found without search: what the event needed that no run of the spec gives."""
    return (
        f"seq {impossible.seq} ts {record['ts']}: no run of the spec explains it, read off the arrivals and answers"
        f" alone ({impossible.claim}): {impossible.detail}"
    )


def witness_environments(header: TraceHeader) -> list[tuple[str, Environment]]:
    """The environments the witness-first search tries in turn (but for one the arrivals and
    answers alone rule out: :func:`_replay_partial`), sharing its share (the first
    pass's first round may use all of it, and each pass keeps an equal part of what is left for
    its second round: :func:`traces.checking.witness.find_witness`): first the part of the
    declaration a trace without one may use (an exception inside the put lock), then, if the
    declaration allows more, all of it but tasks of the broker's own, then all of it. Each hidden
    environment step it allows is a branch at every node, tried when the search backs up, so a
    declaration that allows many would otherwise spend the search on runs the trace does not
    need: a trace whose run needs none of them is searched first as before, and the later passes
    still propose only declared steps. Tasks of the broker's own come last because they also
    loosen the search's state checks: a cleaner's remark counts every element of its queue, so
    where foreign tasks may still join a queue, the counts bound its requests only loosely, and
    a search that may submit them keeps states a search without them drops at once (faults under
    5.3.3, seed 2, was inconclusive with them in the second pass: docs/trace-format.md, "A seventh look").
    Each comes with what it allows, for the messages."""
    declared = header.hidden_environment()
    narrow = replace(QUIET_ENVIRONMENT, exceptions_in_lock=declared.exceptions_in_lock)  # UNDECLARED_ENVIRONMENT's one step, where declared
    own = replace(declared, foreign_tasks=(), max_foreign_tasks=0)
    # Compared as declarations: compiled by mypyc, ``==`` on two Environment records here did not
    # compare their fields (tests/test_compiled.py found the two passes where one was due).
    passes = [
        ("with the declared exceptions inside the put lock alone" if declared.exceptions_in_lock else "with no declared step", narrow),
        ("with every declared step but tasks of the broker's own", own),
        ("with every declared step", declared),
    ]
    # Of equal ones, the broadest's name stays (a declaration without tasks of the broker's own is all declared).
    return [(allowing, e) for i, (allowing, e) in enumerate(passes) if all(environment_to_json(e) != environment_to_json(later) for _, later in passes[i + 1 :])]


def decide(search: PartialReplay, events: Iterable[Mapping[str, Any]]) -> PartialResult:
    """The exhaustive search's verdict: every event fed in turn, until one decides the trace."""
    return next((r for r in map(search.feed, events) if r is not None), None) or search.end()


def witness_records(header: TraceHeader, result: PartialResult) -> Iterator[dict[str, Any]]:
    """The witness of a conformant result as the records of a ``full`` trace, with the trace's own opaques."""
    yield header_record(dataclasses.replace(header, observation=Observation.FULL))
    opaques = iter(result.opaques)
    for seq, (action, ts, responses) in enumerate(result.witness, start=1):
        opaque = next(opaques) if isinstance(action, RequestArrives) else None
        yield event_record(header.trace_id, seq, ts, action, responses, opaque)


# -- On Spark ------------------------------------------------------------------------------------


def _trace_records(table: pa.Table, trace_id: str) -> Iterator[dict[str, Any]]:
    """The events of one trace, in seq order, from the rows of a run that holds it (:func:`read_unit`)."""
    table = table.filter(pc.and_(pc.equal(table.column("trace_id"), pa.scalar(trace_id)), pc.not_equal(table.column("kind"), HEADER_KIND)))
    events = EventColumns(table)
    yield from (events.record(i) for i in range(len(events.seqs)))


def as_replay_result(result: PartialResult, level: Observation) -> ReplayResult:
    """A partial result in the shape ``flowspec check`` reports replays in."""
    search = f"partial replay at {level.value!r}, {result.search}: candidates median {result.median_candidates:g}, max {result.max_candidates}; {result.steps} spec steps"
    if result.verdict == "conformant":
        return ReplayResult(result.trace_id, "conformant", result.events, reason=f"{search}; a witness run of {len(result.witness)} steps")
    if result.verdict == "violation":
        seq = int(result.detail.split()[1]) if result.detail.startswith("seq ") else 0
        divergence = Divergence(result.trace_id, seq, "no run of the spec explains it", "a run of the spec whose observable part is the trace", result.detail, search, "")
        return ReplayResult(result.trace_id, "violation", result.events, divergence)
    return ReplayResult(result.trace_id, "inconclusive", result.events, reason=f"{search}; {result.detail}")


def search_unit(unit: Unit, headers: Mapping[str, dict[str, Any]], budgets: Budgets, witness: bool) -> Iterator[tuple[str, str]]:
    """What a task of :func:`partial_on_spark` does with a unit, a run of whole traces
    (:meth:`Layout.runs`): read its rows once and search each of its traces in turn, by trace id;
    each trace's result as ``flowspec check`` reports replays, with its witness's records (empty
    unless ``witness`` and conformant), as the JSON the driver reads back (:func:`_result_and_witness`).
    An error of the search is the checker's failure, naming the trace."""
    table = read_unit(unit, EVENT_COLUMNS, dictionary=REPEATED_STRINGS)
    for trace_id in sorted(unit.traces or ()):
        header = header_from_record(headers[trace_id])
        try:
            result = replay_partial(header, _trace_records(table, trace_id), budgets)
            records = list(witness_records(header, result)) if witness and result.verdict == "conformant" else []
        except Exception as e:
            raise CheckerFailure(trace_id, e) from e
        yield trace_id, json.dumps({"result": result_json(as_replay_result(result, header.observation)), "witness": records})


def _result_and_witness(text: str) -> tuple[ReplayResult, list[dict[str, Any]]]:
    """One trace's result and witness records, as :func:`search_unit` sent them, read back on the driver."""
    data = json.loads(text)
    return result_from_json(data["result"]), data["witness"]


def partial_on_spark(
    spark: SparkSession, layout: Layout, headers: Mapping[str, dict[str, Any]], trace_ids: Sequence[str], budgets: Budgets, witness: bool
) -> dict[str, tuple[ReplayResult, list[dict[str, Any]]]]:  # pragma: no mutate block (only Spark runs it: docs/checker-mutants.md)
    """Search every trace of ``trace_ids`` on Spark, a task a run of whole traces
    (:meth:`Layout.runs`, :func:`search_unit`); each result with its witness's records (empty
    unless ``witness`` and conformant)."""
    runs = layout.runs(trace_ids, spark.sparkContext.defaultParallelism)
    # Plain values cross to the workers: there this module may be the compiled build, whose
    # Budgets cannot be unpickled from the driver's (a compiled class has no __dict__ to fill).
    limits = dataclasses.astuple(budgets)

    def search(units: Iterable[Unit]) -> Iterator[tuple[str, str]]:
        for unit in units:
            yield from search_unit(unit, headers, Budgets(*limits), witness)

    found = spark.sparkContext.parallelize(runs, max(1, len(runs))).mapPartitions(search).collect() if runs else []
    return {trace_id: _result_and_witness(text) for trace_id, text in found}
