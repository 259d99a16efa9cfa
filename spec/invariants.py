"""Claims about the broker, named so that they read true.

Three modalities, as in Stateright:
- **always**: a predicate over one state (``claim(config, s)``), or a *monitor* over one step
  (``claim(config, before, action, after, outputs)``), that must hold everywhere. A monitor
  observes what the step output (responses written, requests finished silently, processors
  started), the way P's spec monitors observe events. The claims about a request's history
  (answered at most once, settled exactly once, a cancelled task never runs) are monitors: the
  broker's state already says which requests are still inside it, so a monitor needs no memory of
  its own, and a request drops out of view the moment the step that settles it takes it out of
  the broker. Over a run the monitors add up to the history claim: each step keeps it, by
  induction from the initial state where no request exists.
- **sometimes**: a predicate over a reached state and the outputs of the step that reached it
  (``claim(config, s, outputs)``) that must hold at least once, so that no "always" claim passes
  vacuously (the queue can fill; the broker can be busy; a task can be cancelled).
- **eventually** (bounded): once arrivals stop and the clock runs on, every request is settled
  exactly once, checked by running a fair schedule to quiescence (:func:`settles_once_arrivals_stop`).

Each docstring opens with the claim, then says why it matters.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from spec import environment, remoting
from spec.actors import Action
from spec.codes import (
    OVERLOAD_REMARK,
    PUT_CODES,
    REJECT_REQUEST_REMARK,
    parse_clean_queue_remark,
    parse_rate_limit_remark,
    ResponseCode,
    ResponseKind,
)
from spec.config import BrokerConfig
from spec.frozen import record, replace
from spec.machine import Environment, candidate_actions, enabled, step
from spec.profiles import ExecutorName, Profile
from spec.putlock import HA_SERVICE, begin_time_is_zero_when_free, is_os_page_cache_busy
from spec.remoting import route
from spec.state import BrokerState, Outputs, QueueElement, RequestTask, Response, WorkerStage
from spec.storepool import buffers_partition_the_pool, is_transient_store_pool_deficient
from spec.workers import busy_answer, holder_of


class Modality(enum.Enum):
    """How a claim is checked."""

    ALWAYS = "always"
    MONITOR = "always (monitor of each step)"
    SOMETIMES = "sometimes"
    EVENTUALLY = "eventually (bounded)"


Sometimes = Callable[[BrokerConfig, BrokerState, Outputs], bool]


# -- Always: state claims ---------------------------------------------------------------------------


def no_queue_exceeds_its_capacity(config: BrokerConfig, s: BrokerState) -> bool:
    """Every bounded executor queue holds at most its configured capacity, and no executor has more
    threads than configured.

    Why: the bound is what turns overload into an ``[OVERLOAD]`` answer instead of memory growth.
    Source: LinkedBlockingQueue(capacity) (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/LinkedBlockingQueue.html) built in BrokerController.initializeResources (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java#L512-L626).
    """
    for e in s.executors:
        shape = config.executor(e.name)
        if shape.capacity is not None and len(e.queue) > shape.capacity:
            return False
        if len(e.workers) > shape.threads:
            return False
    return True


def at_most_one_writer_holds_the_put_lock(config: BrokerConfig, s: BrokerState) -> bool:
    """At most one thread is inside the put lock's critical section, and it is the lock's holder.

    Why: two writers appending at once corrupt the commit log; and the busy signal is the
    holder's stamp, so a writer inside without holding would be invisible.
    Source: S/PutMessageSpinLock.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/PutMessageSpinLock.java#L24-L41), S/PutMessageReentrantLock.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/PutMessageReentrantLock.java#L24-L36).
    """
    inside = [
        holder_of(e.name, i) for e in s.executors for i, w in enumerate(e.workers) if w.stage is WorkerStage.IN_PUT_LOCK
    ]
    if s.lock.holder == HA_SERVICE:
        return not inside
    if len(inside) > 1:
        return False
    return inside == ([s.lock.holder] if s.lock.holder is not None else [])


def begin_time_is_zero_when_lock_is_free(config: BrokerConfig, s: BrokerState) -> bool:
    """When no writer holds the put lock, beginTimeInLock is 0.

    Why: a stale stamp makes the broker "busy" about a second later with nobody writing, and
    since every writer is then refused at the pre-check, nothing clears it for ~2.8 hours: every
    send fails with ``[REJECTREQUEST]``/``[PC_SYNCHRONIZED]``/``[PCBUSY_CLEAN_QUEUE]``. Violated in
    4.0.0–4.9.2 and 5.x by an exception inside the lock; held in 4.9.3–4.9.8.
    Source: S/CommitLog.java (asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098) (corner 4), ISSUE #3459.
    """
    return begin_time_is_zero_when_free(s.lock)


def lent_and_available_buffers_partition_the_pool(config: BrokerConfig, s: BrokerState) -> bool:
    """Each of the pool's buffers is either available or lent to exactly one live file, with no duplicates;
    a disabled pool has no buffers at all.

    Why: a buffer lent twice is two files writing into one memory region; a lost buffer shrinks
    the pool for good and brings ``[REJECTREQUEST]`` (deficiency) closer.
    Source: S/TransientStorePool.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/TransientStorePool.java#L30-L92).
    """
    size = config.transient_store_pool_size if config.pool_enabled else 0
    return buffers_partition_the_pool(s.available_buffers, s.files, size)


def pool_is_deficient_exactly_when_none_is_available(config: BrokerConfig, s: BrokerState) -> bool:
    """``isTransientStorePoolDeficient()`` holds exactly when the pool is enabled and no buffer is available.

    Why: deficiency refuses every send; it must mean "zero left" (not "few left") and never
    fire for a disabled pool, whose count is Integer.MAX_VALUE (corner 30).
    Source: DefaultMessageStore.isTransientStorePoolDeficient (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java#L2041-L2043).
    """
    deficient = is_transient_store_pool_deficient(s.available_buffers, config.pool_enabled)
    return deficient == (config.pool_enabled and len(s.available_buffers) == 0)


# -- Always: monitors over one step -------------------------------------------------------------------


@record
class Moved:
    """The requests in the parts of the broker one step replaced, before and after it.

    A step replaces only what it touches (a remoting thread, a queue's head or tail, a worker), so
    the requests it moves, admits or settles are all here; a request that stays where it was is
    not. With no request in two places before the step (the claim below, kept at every earlier
    step, and true of the initial state, where there are none), comparing these parts compares the
    whole broker.
    """

    before: tuple[int, ...]  # ids in the replaced parts of the state before the step
    after: tuple[int, ...]  # ids in the parts that replaced them
    held: tuple[RequestTask, ...]  # tasks the replaced workers held before the step
    holding: tuple[RequestTask, ...]  # tasks the workers that replaced them hold after it


def _queue_ids(queue: tuple[QueueElement, ...]) -> list[int]:
    return [t.request.id for t in queue if isinstance(t, RequestTask)]


def _queue_change(before: tuple[QueueElement, ...], after: tuple[QueueElement, ...]) -> tuple[list[int], list[int]]:
    """The ids that left and joined a queue: the head taken or one element offered, else every element."""
    if len(after) == len(before) + 1 and after[:-1] == before:
        return [], _queue_ids(after[-1:])
    if len(after) == len(before) - 1 and after == before[1:]:
        return _queue_ids(before[:1]), []
    return _queue_ids(before), _queue_ids(after)


def moved(before: BrokerState, after: BrokerState) -> Moved:
    """The requests and tasks in the parts of the broker the step ``before → after`` replaced."""
    gone: list[int] = []
    came: list[int] = []
    held: list[RequestTask] = []
    holding: list[RequestTask] = []
    if before.io_threads is not after.io_threads:
        for b, a in zip(before.io_threads, after.io_threads):
            if b is not a:
                gone += [b.request.id] if b.request is not None else []
                came += [a.request.id] if a.request is not None else []
    if before.executors is not after.executors:
        for eb, ea in zip(before.executors, after.executors):
            if eb.queue is not ea.queue:
                left, joined = _queue_change(eb.queue, ea.queue)
                gone += left
                came += joined
            if eb.workers is not ea.workers:
                for index in range(max(len(eb.workers), len(ea.workers))):
                    wb = eb.workers[index] if index < len(eb.workers) else None
                    wa = ea.workers[index] if index < len(ea.workers) else None
                    if wb is not wa:
                        held += [wb.task] if wb is not None and wb.task is not None else []
                        holding += [wa.task] if wa is not None and wa.task is not None else []
    gone += [t.request.id for t in held]
    came += [t.request.id for t in holding]
    return Moved(tuple(gone), tuple(came), tuple(held), tuple(holding))


def each_request_is_answered_at_most_once(
    config: BrokerConfig, before: BrokerState, a: Action, after: BrokerState, out: Outputs
) -> bool:
    """No request id appears in two responses: a step settles only requests it takes out of the
    broker, each once.

    A request leaves the broker in the step that settles it (:func:`every_request_is_in_exactly_one_place`),
    so a second answer would have to settle a request that is no longer inside.

    Why: a second answer to one opaque is either dropped by the client or, worse, completes a
    later request's future; the fast-failure paths and the worker must never both answer.
    Source: RequestTask.returnResponse (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L83-L87) vs. the worker's response.
    """
    settled = out.settled
    if not settled:
        return True
    m = moved(before, after)
    return len(settled) == len(set(settled)) and set(settled) <= set(m.before) - set(m.after)


def every_request_is_in_exactly_one_place(
    config: BrokerConfig, before: BrokerState, a: Action, after: BrokerState, out: Outputs
) -> bool:
    """Every request that arrived is on exactly one of: a remoting thread, a queue, a worker, or settled
    (answered or finished without a response); never two, never none.

    As a monitor: over the parts of the broker a step replaced (:func:`moved`), the requests after
    the step are those before it, plus the one that arrived, minus the ones the step settled, each
    in one place.

    Why: this is conservation: a request that vanishes leaves a producer waiting for its
    timeout, one in two places is processed or answered twice.
    """
    m = moved(before, after)
    arrived = tuple(range(before.next_request_id, after.next_request_id))
    return len(set(m.after)) == len(m.after) and sorted(m.after + out.settled) == sorted(m.before + arrived)


def cancelled_task_never_runs(
    config: BrokerConfig, before: BrokerState, a: Action, after: BrokerState, out: Outputs
) -> bool:
    """No request whose RequestTask was marked stopRun has started its processor, and no worker holds one.

    As a monitor: a step starts only processors of requests a worker held before it, whose task is
    not stopRun, and no worker it changed holds a stopRun task after it. Fast failure settles a
    task in the step that cancels it, so a cancelled request that a worker ran anyway would also be
    settled twice.

    Why: fast failure answered it already; running it would write to the store after the client
    was told "busy" (and a retry would duplicate the message).
    Source: RequestTask.run (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L78-L81) checks stopRun (corner 26).
    """
    m = moved(before, after)
    if any(t.stop_run for t in m.holding):
        return False
    live = {t.request.id for t in m.held if not t.stop_run}
    return all(i in live for i in out.started)


def answer_is_expected(config: BrokerConfig, r: Response) -> bool:
    """Whether one response's code and remark are what the profile writes on its code path.

    The claim below, one response at a time.
    """
    match r.kind:
        case ResponseKind.REJECT_REQUEST:
            return r.code is ResponseCode.SYSTEM_BUSY and r.remark == REJECT_REQUEST_REMARK
        case ResponseKind.OVERLOAD:
            return r.code is ResponseCode.SYSTEM_BUSY and r.remark == OVERLOAD_REMARK
        case ResponseKind.PCBUSY_CLEAN_QUEUE | ResponseKind.TIMEOUT_CLEAN_QUEUE:
            parsed = None if r.remark is None else parse_clean_queue_remark(r.remark)
            return r.code is ResponseCode.SYSTEM_BUSY and parsed is not None and parsed[0] == r.kind.value
        case ResponseKind.RATE_LIMIT:
            return r.code is ResponseCode.SYSTEM_BUSY and r.remark is not None and parse_rate_limit_remark(r.remark) is not None
        case ResponseKind.PC_SYNCHRONIZED:
            return (r.code, r.remark) in {busy_answer(config.profile, c) for c in PUT_CODES}
        case ResponseKind.NOT_SUPPORTED:
            return r.code is ResponseCode.REQUEST_CODE_NOT_SUPPORTED and r.remark is not None and r.remark.startswith(
                " request type "
            )
        case ResponseKind.EXCEPTION:
            return r.code is ResponseCode.SYSTEM_ERROR
        case ResponseKind.SUCCESS | ResponseKind.PROCESSOR:
            return r.code is ResponseCode.SUCCESS


def responses_carry_the_profile_code_and_remark(
    config: BrokerConfig, before: BrokerState, a: Action, after: BrokerState, out: Outputs
) -> bool:
    """Every response has the code and the exact remark text its code path writes in this profile.

    Why: producers, dashboards and runbooks key on these strings and codes; a SYSTEM_BUSY where
    the version sends SYSTEM_ERROR changes whether the client retries (corner 38).
    Source: RequestTask.returnResponse (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L83-L87), SendMessageProcessor.handlePutMessageResult
    (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java#L367-L545), and the releases' changes in docs/spec.md.
    """
    return all(answer_is_expected(config, r) for r in out.responses)


def timeout_answers_only_after_the_queue_wait(
    config: BrokerConfig, before: BrokerState, a: Action, after: BrokerState, out: Outputs
) -> bool:
    """A ``[TIMEOUT_CLEAN_QUEUE]`` answer goes only to a task that waited at least the max wait in force
    for its queue's scan, and its remark reports that wait and the queue's size after the removal.

    Why: the 200 ms send-queue wait is the contract operators tune; answering younger tasks
    fails sends that would have succeeded (corner 20: ``>=``).
    Source: BrokerFastFailure.cleanExpiredRequestInQueue (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L123-L155).
    """
    for r in out.responses:
        if r.kind is not ResponseKind.TIMEOUT_CLEAN_QUEUE:
            continue
        parsed = parse_clean_queue_remark(r.remark or "")
        tasks = [
            (e.name, t) for e in before.executors for t in e.queue if isinstance(t, RequestTask) and t.request.id == r.request_id
        ]
        if parsed is None or len(tasks) != 1:
            return False
        name, task = tasks[0]
        _, period, size = parsed
        if period != before.now - task.create_timestamp or period < before.fast_failure_scan_wait:
            return False
        if size != len(after.executor(name).queue):
            return False
    return True


def pcbusy_answers_only_while_busy(
    config: BrokerConfig, before: BrokerState, a: Action, after: BrokerState, out: Outputs
) -> bool:
    """A ``[PCBUSY_CLEAN_QUEUE]`` answer is written only while the store is busy, only for a send-queue
    task, with the send queue's size after the poll.

    Why: phase 1 has no age check; outside a busy window it would fail every queued send.
    Source: BrokerFastFailure.cleanExpiredRequest (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L93-L121) phase 1.
    """
    for r in out.responses:
        if r.kind is not ResponseKind.PCBUSY_CLEAN_QUEUE:
            continue
        if not is_os_page_cache_busy(before.lock, before.now, config.os_page_cache_busy_timeout_ms):
            return False
        send_before = before.executor(ExecutorName.SEND).queue
        if not any(isinstance(t, RequestTask) and t.request.id == r.request_id for t in send_before):
            return False
        parsed = parse_clean_queue_remark(r.remark or "")
        if parsed is None or parsed[2] != len(after.executor(ExecutorName.SEND).queue):
            return False
    return True


def reject_request_answers_only_while_busy_or_deficient(
    config: BrokerConfig, before: BrokerState, a: Action, after: BrokerState, out: Outputs
) -> bool:
    """A ``[REJECTREQUEST]`` answer is written only while the store is busy or the pool is deficient.

    Why: it refuses the send before it is queued; any other cause is a false "system busy".
    Source: SendMessageProcessor.rejectRequest (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java#L129-L139).
    """
    for r in out.responses:
        if r.kind is ResponseKind.REJECT_REQUEST:
            busy = is_os_page_cache_busy(before.lock, before.now, config.os_page_cache_busy_timeout_ms)
            if not (busy or is_transient_store_pool_deficient(before.available_buffers, config.pool_enabled)):
                return False
    return True


def overload_answers_only_when_the_queue_is_full(
    config: BrokerConfig, before: BrokerState, a: Action, after: BrokerState, out: Outputs
) -> bool:
    """An ``[OVERLOAD]`` answer is written only when the request's executor has all its threads and a full queue.

    Why: OVERLOAD is the bounded queue's signal; firing earlier refuses work the executor could
    take (corner 9: a submit that starts a core thread skips the queue).
    Source: ThreadPoolExecutor.execute (https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/util/concurrent/ThreadPoolExecutor.html#execute(java.lang.Runnable)) with AbortPolicy.
    """
    for r in out.responses:
        if r.kind is not ResponseKind.OVERLOAD:
            continue
        io = next((io for io in before.io_threads if io.request is not None and io.request.id == r.request_id), None)
        if io is None or io.request is None:
            return False
        name = route(config, io.request.code)
        if name is None:
            return False
        shape, executor = config.executor(name), before.executor(name)
        if shape.capacity is None or len(executor.queue) < shape.capacity or len(executor.workers) < shape.threads:
            return False
    return True


# -- Sometimes ---------------------------------------------------------------------------------------


def a_queue_can_fill(config: BrokerConfig, s: BrokerState, out: Outputs) -> bool:
    """Some bounded queue is at its capacity."""
    return any(
        config.executor(e.name).capacity is not None and len(e.queue) >= (config.executor(e.name).capacity or 0) > 0
        for e in s.executors
    )


def the_broker_can_be_busy(config: BrokerConfig, s: BrokerState, out: Outputs) -> bool:
    """``isOSPageCacheBusy()`` is true."""
    return is_os_page_cache_busy(s.lock, s.now, config.os_page_cache_busy_timeout_ms)


def the_pool_can_run_dry(config: BrokerConfig, s: BrokerState, out: Outputs) -> bool:
    """The pool is enabled and no buffer is available."""
    return config.pool_enabled and not s.available_buffers


def a_task_can_be_cancelled(config: BrokerConfig, s: BrokerState, out: Outputs) -> bool:
    """Fast failure marks a RequestTask stopRun: phase 2 removes an expired head and answers it."""
    return any(r.kind is ResponseKind.TIMEOUT_CLEAN_QUEUE for r in out.responses)


def queue_order_can_differ_from_timestamps(config: BrokerConfig, s: BrokerState, out: Outputs) -> bool:
    """Some queue holds a RequestTask behind one with a later createTimestamp (two IO threads raced)."""
    for e in s.executors:
        stamps = [t.create_timestamp for t in e.queue if isinstance(t, RequestTask)]
        if any(a > b for a, b in zip(stamps, stamps[1:])):
            return True
    return False


def the_limiter_can_open(config: BrokerConfig, s: BrokerState, out: Outputs) -> bool:
    """Some topic's circuit breaker is open."""
    return any(b.bucket.circuit_open for b in s.buckets)


def _answered_with(kind: ResponseKind) -> Sometimes:
    def reached(config: BrokerConfig, s: BrokerState, out: Outputs) -> bool:
        return any(r.kind is kind for r in out.responses)

    reached.__name__ = f"a_{kind.name.lower()}_answer_can_be_written"
    reached.__doc__ = f"Some request gets a {kind.value} answer."
    return reached


# -- Eventually (bounded) ---------------------------------------------------------------------------


def _quiescent_environment(env: Environment) -> Environment:
    """The environment once arrivals and faults stop: only the clock still moves."""
    return replace(
        env,
        max_requests=0,
        exceptions_in_lock=False,
        ha_appends=False,
        max_foreign_tasks=0,
        limiter_overflows=False,
        fast_failure_toggles=(),
        queue_wait_changes=(),
        clock_steps=(),
    )


def quiescence_step(config: BrokerConfig, s: BrokerState, env: Environment) -> tuple[Action, BrokerState, Outputs] | None:
    """One step of the fair schedule used for bounded liveness, or None once everything is settled.

    With no new arrivals and no faults: a HA holder releases first; otherwise the first enabled
    thread action (in :func:`spec.machine.candidate_actions` order) is taken; when no thread
    can move, the clock advances one fast-failure period. The schedule is deterministic, so a
    run to quiescence is a function of the state.
    """
    a: Action
    if s.lock.holder == HA_SERVICE:
        a = environment.HaServiceReleasesPutLock()
        return (a, *step(config, s, a))
    if not s.requests_inside():
        return None
    quiet = _quiescent_environment(env)
    for a in candidate_actions(config, s, quiet):
        if not isinstance(a, remoting.RequestArrives) and enabled(config, s, a):
            return (a, *step(config, s, a))
    a = environment.ClockAdvances(config.fast_failure_period_ms)
    return (a, *step(config, s, a))


def settles_once_arrivals_stop(
    config: BrokerConfig,
    s: BrokerState,
    env: Environment,
    verdicts: dict[BrokerState, bool] | None = None,
    max_steps: int = 20_000,
) -> bool:
    """Once arrivals stop and the clock runs on, every request is settled exactly once: answered once
    (or, where the profile writes nothing for it, finished without a response), and none is left
    anywhere in the broker.

    Why: overload protection may refuse work, but it must never strand a request: a stranded
    send is a producer blocked until its own timeout, with no reason given.

    Checked by following :func:`quiescence_step` for at most ``max_steps`` steps, each step kept
    by the two settling monitors (a run that breaks one, or does not settle by then, breaks the
    claim). The schedule is deterministic, so every state on one run has the same verdict:
    ``verdicts``, when given, remembers them, and a run that reaches a judged state stops there
    (the explorer checks every state this way in about linear time).
    """
    path: list[BrokerState] = []
    verdict = False
    for _ in range(max_steps):
        known = None if verdicts is None else verdicts.get(s)
        if known is not None:
            verdict = known
            break
        path.append(s)
        following = quiescence_step(config, s, env)
        if following is None:
            verdict = True
            break
        a, after, out = following
        if not (
            each_request_is_answered_at_most_once(config, s, a, after, out)
            and every_request_is_in_exactly_one_place(config, s, a, after, out)
        ):
            break
        s = after
    if verdicts is not None:
        verdicts.update(dict.fromkeys(path, verdict))
    return verdict


# -- The registry ------------------------------------------------------------------------------------


@record
class Claim:
    """A named claim with its modality."""

    name: str
    modality: Modality
    check: Callable[..., bool]

    @property
    def doc(self) -> str:
        """The claim's docstring."""
        return self.check.__doc__ or ""


STATE_CLAIMS: tuple[Claim, ...] = tuple(
    Claim(f.__name__, Modality.ALWAYS, f)
    for f in (
        no_queue_exceeds_its_capacity,
        at_most_one_writer_holds_the_put_lock,
        begin_time_is_zero_when_lock_is_free,
        lent_and_available_buffers_partition_the_pool,
        pool_is_deficient_exactly_when_none_is_available,
    )
)

MONITORS: tuple[Claim, ...] = tuple(
    Claim(f.__name__, Modality.MONITOR, f)
    for f in (
        each_request_is_answered_at_most_once,
        every_request_is_in_exactly_one_place,
        cancelled_task_never_runs,
        responses_carry_the_profile_code_and_remark,
        timeout_answers_only_after_the_queue_wait,
        pcbusy_answers_only_while_busy,
        reject_request_answers_only_while_busy_or_deficient,
        overload_answers_only_when_the_queue_is_full,
    )
)

SOMETIMES: tuple[Claim, ...] = tuple(
    Claim(f.__name__, Modality.SOMETIMES, f)
    for f in (
        a_queue_can_fill,
        the_broker_can_be_busy,
        the_pool_can_run_dry,
        a_task_can_be_cancelled,
        queue_order_can_differ_from_timestamps,
        the_limiter_can_open,
        *(
            _answered_with(k)
            for k in (
                ResponseKind.REJECT_REQUEST,
                ResponseKind.OVERLOAD,
                ResponseKind.PC_SYNCHRONIZED,
                ResponseKind.PCBUSY_CLEAN_QUEUE,
                ResponseKind.TIMEOUT_CLEAN_QUEUE,
                ResponseKind.RATE_LIMIT,
            )
        ),
    )
)

EVENTUALLY: tuple[Claim, ...] = (Claim("settles_once_arrivals_stop", Modality.EVENTUALLY, settles_once_arrivals_stop),)

ALL_CLAIMS: tuple[Claim, ...] = STATE_CLAIMS + MONITORS + SOMETIMES + EVENTUALLY


def known_defects(profile: Profile) -> frozenset[str]:
    """The claims a release's own code breaks, as the spec models it.

    A trace that breaks one of these can still follow its release faithfully: the defect is the
    release's, and a checker reports it as such. The stuck ``beginTimeInLock`` after an exception
    inside the put lock is the one modelled (:func:`begin_time_is_zero_when_lock_is_free`); the
    explored models break exactly these claims per profile (tests/test_explore.py).
    """
    if profile.begin_time_reset_in_finally:
        return frozenset()
    return frozenset({begin_time_is_zero_when_lock_is_free.__name__})


def broken_state_claims(config: BrokerConfig, s: BrokerState) -> list[str]:
    """Names of the state claims ``s`` breaks."""
    return [c.name for c in STATE_CLAIMS if not c.check(config, s)]


def broken_monitors(config: BrokerConfig, before: BrokerState, a: Action, after: BrokerState, out: Outputs) -> list[str]:
    """Names of the monitors the step ``before --a--> after`` with outputs ``out`` breaks."""
    return [c.name for c in MONITORS if not c.check(config, before, a, after, out)]
