"""The commit-log put lock and "page cache busy".

A writer takes ``putMessageLock`` and then stamps ``beginTimeInLock`` with the clock; the
dispatcher, the put pre-check and BrokerFastFailure all ask ``isOSPageCacheBusy()``, which is
true while the current holder has held the lock for longer than ``osPageCacheBusyTimeOutMills``
(and less than 10^7 ms). Only the holder's time counts: threads waiting or spinning for the lock
are invisible (corner 3), and the HA service's ``appendData`` holds the lock without stamping
(corner 5).

The functions here are the lock's transitions; each carries a CrossHair contract
(``pre:``/``post:``) that ``make symbolic`` checks.
"""

from __future__ import annotations


from spec.config import BUSY_UPPER_BOUND_MS
from spec.frozen import record

Holder = tuple[str, int]
"""A put-lock holder: (executor name, worker index), or :data:`HA_SERVICE`."""

HA_SERVICE: Holder = ("ha", 0)
"""The HA service's CommitLog.appendData, which holds the lock but never sets beginTimeInLock."""


@record
class PutLock:
    """CommitLog.putMessageLock with CommitLog.beginTimeInLock."""

    holder: Holder | None  # the thread inside the critical section; None = free
    begin_time_in_lock: int  # CommitLog.beginTimeInLock; 0 = no writer holds the lock (the idle sentinel)


FREE_LOCK = PutLock(holder=None, begin_time_in_lock=0)


def begin_time_is_zero_when_free(lock: PutLock) -> bool:
    """The lock's own consistency: a free lock has no begin time (see the invariant of that name)."""
    return lock.holder is not None or lock.begin_time_in_lock == 0


def is_os_page_cache_busy(lock: PutLock, now: int, timeout_ms: int) -> bool:
    """``DefaultMessageStore.isOSPageCacheBusy()``: ``timeout < now - begin < 10^7``, both strict.

    Source: S/DefaultMessageStore.java isOSPageCacheBusy (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java#L674-L680), 4.0.0–HEAD.
    Simplification: with real epoch clocks ``begin == 0`` gives a diff of ~1.7e12 ≥ 10^7, so the
    idle sentinel is never busy; with the spec's small clocks that must be said explicitly
    (corner 2). A negative diff (clock stepped back) is not busy, as in Java.

    post: (lock.begin_time_in_lock != 0) or (not __return__)
    """
    if lock.begin_time_in_lock == 0:
        return False
    diff = now - lock.begin_time_in_lock
    return timeout_ms < diff < BUSY_UPPER_BOUND_MS


def acquire_for_put(lock: PutLock, holder: Holder, now: int) -> PutLock:
    """A writer takes the lock, then stamps beginTimeInLock with the clock.

    Source: S/CommitLog.java putMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-4.6.0/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L553-L674; asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098)/putMessages (4.0.0–4.6.x), asyncPutMessage(s)
    (4.7.0–HEAD): ``putMessageLock.lock(); beginTimeInLock = now()``.
    Simplification: lock and stamp are one step; the instructions between them read no shared state.

    pre: lock.holder is None
    pre: now > 0
    post: __return__.holder == holder and __return__.begin_time_in_lock == now
    """
    return PutLock(holder=holder, begin_time_in_lock=now)


def release_after_put(lock: PutLock) -> PutLock:
    """A writer's normal end: reset beginTimeInLock, then unlock.

    Source: S/CommitLog.java (asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098): the reset before every early return and at the normal end
    (4.0.0–4.9.2, 5.0.0–HEAD) or in ``finally`` (4.9.3–4.9.8); unlock in ``finally``.

    pre: lock.holder is not None
    post: __return__ == FREE_LOCK
    """
    return FREE_LOCK


def throw_inside_lock(lock: PutLock, reset_in_finally: bool) -> PutLock:
    """An exception escapes between the stamp and the reset; ``finally`` unlocks.

    Only the profiles whose ``finally`` also resets (4.9.3–4.9.8) clear beginTimeInLock; every
    other version leaves it stuck, and about a second later the broker is busy with no writer
    (corner 4). Source: S/CommitLog.java (asyncPutMessage at 5.3.3: https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L923-L1098), fix c6aeb782e5 (ISSUE #3459).

    pre: lock.holder is not None
    post: __return__.holder is None
    post: (not reset_in_finally) or begin_time_is_zero_when_free(__return__)
    post: reset_in_finally or __return__.begin_time_in_lock == lock.begin_time_in_lock
    """
    if reset_in_finally:
        return FREE_LOCK
    return PutLock(holder=None, begin_time_in_lock=lock.begin_time_in_lock)


def acquire_for_ha(lock: PutLock) -> PutLock:
    """``CommitLog.appendData`` (replication) takes the same lock and never stamps it (corner 5).

    Source: S/CommitLog.java appendData (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/CommitLog.java#L1391-L1404), 4.0.0–HEAD.

    pre: lock.holder is None
    post: __return__.holder == HA_SERVICE
    post: __return__.begin_time_in_lock == lock.begin_time_in_lock
    """
    return PutLock(holder=HA_SERVICE, begin_time_in_lock=lock.begin_time_in_lock)


def release_for_ha(lock: PutLock) -> PutLock:
    """``appendData``'s ``finally`` unlocks; beginTimeInLock is left as it was.

    pre: lock.holder == HA_SERVICE
    post: __return__.holder is None
    post: __return__.begin_time_in_lock == lock.begin_time_in_lock
    """
    return PutLock(holder=None, begin_time_in_lock=lock.begin_time_in_lock)
