"""The reference broker on real threads: one per remoting thread, per worker, for the commit service,
the fast-failure scheduler and the clock, for a bounded time and number of steps.

Every atomic step runs under one broker-wide step mutex, so the steps a recorder sees form a
valid interleaving of the stepped broker; a thread that cannot move waits on the mutex's
condition (which releases the mutex) until another step or the clock wakes it. The clock thread
turns real time into :meth:`Broker.clock_advances` calls, scaled by ``time_scale`` broker
milliseconds per real millisecond.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from reference.broker import Broker, StepRefused
from reference.lockstep import step_thread
from spec.actors import IoThreadId, ThreadId, all_threads
from reference.recorder import Recorder
from spec.codes import RequestCode
from spec.config import BrokerConfig

_IDLE_WAIT_S = 0.002  # how long a thread that cannot move waits before it looks again


@dataclass(frozen=True)
class RequestKind:
    """A kind of request the producers send."""

    code: RequestCode
    topic: str = "TopicTest"
    oneway: bool = False


@dataclass(frozen=True)
class Workload:
    """What the clients do: ``max_requests`` requests of these kinds, each IO thread taking a new
    one at most every ``arrival_gap_ms`` broker milliseconds."""

    requests: tuple[RequestKind, ...]
    max_requests: int
    arrival_gap_ms: int = 0


@dataclass(frozen=True)
class ThreadedRun:
    """How a run ended."""

    broker: Broker
    steps: int  # atomic steps taken, inputs included
    stopped_by: str  # "steps" or "time"


class _Run:
    """The shared state of one run: the broker, its step mutex, the counters and the stop flag."""

    def __init__(self, broker: Broker, workload: Workload, max_steps: int, seed: int) -> None:
        self.broker = broker
        self.workload = workload
        self.max_steps = max_steps
        self.rng = random.Random(seed)
        self.mutex = threading.Condition(threading.Lock())
        self.steps = 0
        self.arrivals = 0
        self.stopped_by = "time"
        self.stop = threading.Event()
        self.next_arrival: dict[int, int] = {}

    def count(self) -> None:
        """One step was taken (call with the mutex held); stop at the step budget."""
        self.steps += 1
        self.mutex.notify_all()
        if self.steps >= self.max_steps:
            self.stopped_by = "steps"
            self.stop.set()

    def drive(self, attempt: Callable[[], bool]) -> None:
        """A thread's loop: take steps while it can, wait (outside the mutex) while it cannot."""
        while not self.stop.is_set():
            with self.mutex:
                if self.stop.is_set():
                    return
                moved = attempt()
                if moved:
                    self.count()
                else:
                    self.mutex.wait(_IDLE_WAIT_S)
            if moved:
                time.sleep(0)  # let another thread take the mutex: steps interleave rather than run in bursts

    def thread_step(self, thread: ThreadId) -> bool:
        return step_thread(self.broker, thread) is not None

    def io_step(self, thread: IoThreadId) -> bool:
        """An idle IO thread reads a new request when one is due; otherwise it works on its current one."""
        broker, workload = self.broker, self.workload
        due = self.next_arrival.get(thread.index, broker.now)
        if self.arrivals < workload.max_requests and broker.now >= due:
            kind = self.rng.choice(workload.requests)
            try:
                broker.request_arrives(thread.index, kind.code, kind.topic, kind.oneway)
            except StepRefused:
                pass  # still busy with the previous request
            else:
                self.arrivals += 1
                self.next_arrival[thread.index] = broker.now + workload.arrival_gap_ms
                return True
        return step_thread(broker, thread) is not None

    def clock(self, time_scale: float) -> None:
        """Advance the broker clock to the scaled real time, then sleep a real millisecond."""
        started = time.monotonic()
        origin = self.broker.now
        while not self.stop.is_set():
            with self.mutex:
                target = origin + int((time.monotonic() - started) * 1000 * time_scale)
                if target > self.broker.now and not self.stop.is_set():
                    self.broker.clock_advances(target - self.broker.now)
                    self.count()
            time.sleep(0.001)


def run_threaded(
    config: BrokerConfig,
    workload: Workload,
    *,
    seconds: float,
    max_steps: int,
    time_scale: float = 1.0,
    seed: int = 0,
    recorder: Recorder | None = None,
) -> ThreadedRun:
    """Run a broker on real threads until ``seconds`` of real time pass or ``max_steps`` steps are taken."""
    if seconds <= 0 or max_steps <= 0 or time_scale <= 0:
        raise ValueError(f"seconds={seconds}, max_steps={max_steps} and time_scale={time_scale} must be > 0")
    broker = Broker(config, recorder=recorder)
    run = _Run(broker, workload, max_steps, seed)
    threads = [threading.Thread(target=run.clock, args=(time_scale,), name="clock", daemon=True)]
    for thread in all_threads(config):
        threads.append(threading.Thread(target=run.drive, args=(_attempt(run, thread),), name=repr(thread), daemon=True))
    for t in threads:
        t.start()
    run.stop.wait(seconds)
    run.stop.set()
    with run.mutex:
        run.mutex.notify_all()
    for t in threads:
        t.join(timeout=5.0)
        if t.is_alive():
            raise RuntimeError(f"thread {t.name} did not stop within 5 s of the end of the run")
    return ThreadedRun(broker, run.steps, run.stopped_by)


def _attempt(run: _Run, thread: ThreadId) -> Callable[[], bool]:
    if isinstance(thread, IoThreadId):
        return lambda: run.io_step(thread)
    return lambda: run.thread_step(thread)
