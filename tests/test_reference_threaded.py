"""The reference broker on real threads records a valid interleaving and stops by itself."""

from __future__ import annotations

from collections import Counter

from reference.recorder import ListRecorder
from reference.threaded import RequestKind, Workload, run_threaded
from spec.codes import RequestCode
from spec.config import broker_config
from spec.machine import step
from spec.profiles import ExecutorName
from spec.releases import PROFILES
from spec.state import initial_state


def test_a_threaded_run_is_a_valid_interleaving_of_spec_steps() -> None:
    config = broker_config(
        PROFILES["5.3.3"],
        io_threads=2,
        executors=(ExecutorName.SEND, ExecutorName.PULL, ExecutorName.ADMIN),
        threads={ExecutorName.SEND: 2, ExecutorName.PULL: 1, ExecutorName.ADMIN: 1},
        capacities={ExecutorName.SEND: 3, ExecutorName.PULL: 2, ExecutorName.ADMIN: 2},
        queue_waits={ExecutorName.SEND: 5, ExecutorName.PULL: 10, ExecutorName.ADMIN: 10},
        os_page_cache_busy_timeout_ms=3,
        fast_failure_initial_delay_ms=5,
        fast_failure_period_ms=2,
        transient_store_pool_enable=True,
        transient_store_pool_size=2,
        mapped_file_size=2,
    )
    workload = Workload(
        requests=(
            RequestKind(RequestCode.SEND_MESSAGE),
            RequestKind(RequestCode.SEND_MESSAGE, oneway=True),
            RequestKind(RequestCode.PULL_MESSAGE),
            RequestKind(RequestCode.GET_BROKER_RUNTIME_INFO, ""),
        ),
        max_requests=300,
    )
    recorder = ListRecorder()
    run = run_threaded(config, workload, seconds=1.5, max_steps=4000, recorder=recorder)

    assert len(recorder.steps) == run.steps <= 4000
    s = initial_state(config)
    for i, recorded in enumerate(recorder.steps):
        s, out = step(config, s, recorded.action)  # raises if the recorded step was not enabled
        assert s.now == recorded.now, f"step {i}: recorded clock {recorded.now}, spec clock {s.now}"
        assert out.responses == recorded.responses, f"step {i}: recorded {recorded.responses}, spec {out.responses}"
    assert s == run.broker.observe()
    assert [r for st in recorder.steps for r in st.responses] == run.broker.responses
    kinds = Counter(type(st.action).__name__ for st in recorder.steps)
    assert kinds["RequestArrives"] > 10 and kinds["WorkerAppendsAndUnlocks"] > 0 and kinds["ClockAdvances"] > 10, kinds
