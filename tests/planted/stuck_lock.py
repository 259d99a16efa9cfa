"""properties.symbolic.check_worker_throws_inside_lock without its profile precondition, on profile 5.3.3.

Not a mistake planted in the spec but one planted in the contract: 5.x does not reset
beginTimeInLock in ``finally``, so an exception inside the put lock leaves the lock free with a
stale stamp and breaks begin_time_is_zero_when_lock_is_free (corner 4, ISSUE #3459). CrossHair
must find it through the whole-broker action contract: the action contracts can fail.
"""

from __future__ import annotations

from spec.config import BrokerConfig
from spec.releases import PROFILES
from spec.state import BrokerState
from properties.symbolic import THROW_INSIDE_LOCK, LockFrame, after, claims_hold, lock_frame_config, premise

_CONFIG_5_3_3 = lock_frame_config(PROFILES["5.3.3"])


class LockFrame533(LockFrame):
    """The lock frame on profile 5.3.3, which has no ``finally`` reset."""

    def config(self) -> BrokerConfig:
        """The lock frame's broker under 5.3.3."""
        return _CONFIG_5_3_3


def check_worker_throws_inside_lock(frame: LockFrame533) -> BrokerState:
    """WorkerThrowsInsideLock keeps every claim (planted: the profile precondition is gone).

    pre: premise(frame, THROW_INSIDE_LOCK)
    post: claims_hold(frame, THROW_INSIDE_LOCK, __return__)
    """
    return after(frame, THROW_INSIDE_LOCK)
