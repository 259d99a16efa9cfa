"""The 39 corner cases a spec of the broker's overload protection must get right (docs/sources.md
lists where they come from): where the spec covers each, or why it does not.

tests/test_corner_cases.py has a ``test_corner_NN_*`` for every covered corner and checks that
every number 1–39 is in exactly one of :data:`COVERED` and :data:`LEFT_OUT`; docs/spec.md
renders both tables.
"""

from __future__ import annotations

COVERED: dict[int, str] = {
    1: "putlock.is_os_page_cache_busy: strict timeout < diff < 10^7",
    2: "putlock.is_os_page_cache_busy: begin_time_in_lock == 0 is idle, explicitly",
    3: "putlock.acquire_for_put stamps on acquisition; WorkerPassesPutCheck and WorkerAcquiresPutLock are separate steps",
    4: "WorkerThrowsInsideLock → putlock.throw_inside_lock(profile.begin_time_reset_in_finally)",
    5: "HaServiceAcquiresPutLock / HaServiceReleasesPutLock never stamp the lock",
    6: "WorkerFindsPageCacheBusy → workers.busy_answer (profile.pc_synchronized_code)",
    7: "remoting: DispatchAnswersNotSupported → DispatchRejectsRequest → DispatchCreatesTask → submit actions",
    8: "profile.dispatch_answers_oneway; DispatchRejectsOverload never for oneway; fast-failure answers always written",
    9: "DispatchStartsWorker while threads < core; DispatchRejectsOverload only with all threads and a full queue",
    12: "fastfailure: busy re-read before each FastFailureDrainsBusySendQueue",
    13: "FastFailureDrainsBusySendQueue has no age check",
    14: "phase 1 reads only the send queue",
    15: "phase 1 neither reads nor sets stopRun",
    16: "FastFailureEndsBusyDrain when the send queue is empty, even while busy",
    17: "FastFailureDropsForeignElement",
    18: "pcbusy_remark(period at response time, size after the poll)",
    19: "FastFailureStartsRun → phase 1; FastFailureEndsBusyDrain → phase 2 from the send queue",
    20: "fastfailure.is_expired uses >=",
    21: "FastFailureStopsAtHead on a young head; task creation and submit are separate steps",
    22: "FastFailureStopsAtHead on an absent, foreign or stopRun head, without removing it",
    23: "atomic steps: a worker's WorkerTakesTask simply precedes the scan's re-read of the head",
    24: "FastFailureCleansExpiredHead: remove, stopRun, respond in one step; the scan goes on",
    25: "timeout_remark(now - createTimestamp, size after removal), now read per step",
    26: "phase 2 sees only queued tasks; WorkerDiscardsCancelledTask",
    27: "fixed-rate schedule, FastFailureSkipsRun, switch read per run, wait read once per queue scan",
    29: "profile.cleaned_queues and executor_of_code per version",
    30: "storepool.is_transient_store_pool_deficient with BrokerConfig.pool_enabled per profile",
    31: "storepool.borrow_buffer returns None when empty; the file then writes to its mmap",
    32: "storepool.return_buffer and borrow_buffer at the deque head; init appends at the tail",
    33: "CommitServiceReturnsBuffer only when committed == file size",
    37: "storepool.file_to_commit: one file per commit; a boundary takes another step",
    38: "client.retries_on_broker_code with profile.sync_retry_codes, SYNC only",
    39: "profiles: ThreadFormula and ExecutorDefaults per version; profile.put_lock",
}

LEFT_OUT: dict[int, str] = {
    10: "the RejectedExecution warning (currentTimeMillis() % 10000 == 0) is a log line, not an output",
    11: "5.1.0+'s catch of a non-Rejected Throwable from submit is not modelled (a non-goal in spec/__init__.py)",
    28: "an exception escaping a fast-failure run (cancelling the schedule) is not modelled: no spec run throws",
    34: "TransientStorePool.destroy / munlock at shutdown is not modelled: there is no shutdown action",
    35: "read and flush positions are not modelled: reads and flush are non-goals",
    36: "fastFailIfNoBufferInStorePool (off by default) and next-next-file pre-allocation are not modelled",
}

PARTLY_LEFT_OUT: dict[int, str] = {
    24: "an exception swallowed after the removal (remove, stopRun and respond are one atomic step)",
    29: "END_TRANSACTION in the send queue (4.0.0–4.3.0): no profile older than 4.3.2 exists yet",
    31: "the low-water warning (size after poll < poolSize × 0.4) is a log line",
    33: "destroy, cleanup and truncation: no such action, so their never returning the buffer holds trivially",
    37: "commitCommitLogLeastPages and the 200 ms thorough interval: commits may happen whenever there is work",
    39: "ackMessageThreadPoolNums = 3 in 5.0–5.2: no 5.0–5.2 profile yet",
}
