"""spec.putlock.release_after_put, planted bug: the writer unlocks but forgets to reset beginTimeInLock.

The same mistake as an exception inside the lock in a profile without the ``finally`` reset:
the lock is free with a stale stamp, and the broker turns "busy" with no writer.
"""

from __future__ import annotations

from spec.putlock import FREE_LOCK, PutLock


def release_after_put(lock: PutLock) -> PutLock:
    """A writer's normal end: reset beginTimeInLock, then unlock.

    pre: lock.holder is not None
    post: __return__ == FREE_LOCK
    """
    return PutLock(holder=None, begin_time_in_lock=lock.begin_time_in_lock)  # planted: no reset
