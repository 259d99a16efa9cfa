"""Source 004's per-topic limiter, written as its Java is: a mutable Guava SmoothBursty with a breaker.

``TokenBucketRateLimiter`` is "modified from Guava": the SmoothRateLimiter fields and arithmetic
of ``RateLimiter.create(permitsPerSecond)`` (doubles for permits and the interval, longs for
microseconds, a ``(long)`` cast that truncates the wait), and the article's ``acquire`` that
reserves without a ``canAcquire`` pre-check and opens a circuit breaker instead of sleeping.

The stopwatch is the broker's millisecond clock read from the limiter's creation, so its
microseconds are multiples of 1000.

Sources: Guava 31.1 SmoothRateLimiter.java (https://github.com/google/guava/blob/v31.1/guava/src/com/google/common/util/concurrent/SmoothRateLimiter.java) (resync, reserveEarliestAvailable, SmoothBursty.doSetRate)
and RateLimiter.java (create, setRate, reserveAndGetWaitLength); docs/sources.md, source 004, section 四.5.
"""

from __future__ import annotations

import math

MICROS_PER_SECOND = 1_000_000
LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)


def java_long(value: float) -> int:
    """Java's ``(long)`` cast of a double: NaN is 0, out-of-range values saturate, else truncate toward 0."""
    if math.isnan(value):
        return 0
    if value >= LONG_MAX:
        return LONG_MAX
    if value <= LONG_MIN:
        return LONG_MIN
    return int(value)


def saturated_add(a: int, b: int) -> int:
    """Guava's ``LongMath.saturatedAdd``."""
    return max(LONG_MIN, min(LONG_MAX, a + b))


class TokenBucketRateLimiter:
    """One topic's bucket: SmoothBursty state plus ``circuitBreakerOpen`` and ``lastNeedWaitMicrosecs``."""

    def __init__(self, permits_per_second: float, created_at_ms: int, circuit_breaker_open_micros: int) -> None:
        if not permits_per_second > 0.0:  # RateLimiter.setRate's checkArgument
            raise ValueError(f"rate must be positive, got permits_per_second={permits_per_second}")
        # RateLimiter.create(qps) → new SmoothBursty(stopwatch, 1.0) → setRate(qps) at stopwatch 0:
        # resync(0) changes nothing, and SmoothBursty.doSetRate sees oldMaxPermits == 0.0, so the
        # limiter starts with no stored permits (not with a full burst).
        self.max_burst_seconds = 1.0
        self.stable_interval_micros = MICROS_PER_SECOND / permits_per_second
        self.max_permits = self.max_burst_seconds * permits_per_second
        self.stored_permits = 0.0
        self.next_free_ticket_micros = 0
        self.created_at_ms = created_at_ms  # Stopwatch.createStarted(): the zero of read_micros
        self.circuit_breaker_open_micros = circuit_breaker_open_micros
        self.circuit_breaker_open = False
        self.last_need_wait_micros = 0

    def read_micros(self, now_ms: int) -> int:
        """``SleepingStopwatch.readMicros()``: micros since this limiter was created."""
        return (now_ms - self.created_at_ms) * 1000

    def _cool_down_interval_micros(self) -> float:
        return self.stable_interval_micros  # SmoothBursty

    def _resync(self, now_micros: int) -> None:
        """Turn idle time since ``nextFreeTicketMicros`` into stored permits (strict ``>``)."""
        if now_micros > self.next_free_ticket_micros:
            new_permits = (now_micros - self.next_free_ticket_micros) / self._cool_down_interval_micros()
            self.stored_permits = min(self.max_permits, self.stored_permits + new_permits)
            self.next_free_ticket_micros = now_micros

    def _reserve_earliest_available(self, required_permits: int, now_micros: int) -> int:
        """Reserve: the caller waits for the previous debt; this request's cost moves the next ticket."""
        self._resync(now_micros)
        return_value = self.next_free_ticket_micros
        stored_permits_to_spend = min(float(required_permits), self.stored_permits)
        fresh_permits = required_permits - stored_permits_to_spend
        # storedPermitsToWaitTime(...) + (long) (fresh * interval); SmoothBursty's stored permits cost 0.
        wait_micros = java_long(fresh_permits * self.stable_interval_micros)
        self.next_free_ticket_micros = saturated_add(self.next_free_ticket_micros, wait_micros)
        self.stored_permits -= stored_permits_to_spend
        return return_value

    def _reserve_and_get_wait_length(self, permits: int, now_micros: int) -> int:
        moment_available = self._reserve_earliest_available(permits, now_micros)
        return max(moment_available - now_micros, 0)

    def acquire(self, now_ms: int) -> bool:
        """Source 004's ``acquire()``: close a breaker that has been open long enough; if closed,
        reserve one permit, and open the breaker when that reservation would have to wait."""
        now_micros = self.read_micros(now_ms)
        if self.circuit_breaker_open and now_micros - self.next_free_ticket_micros >= self.circuit_breaker_open_micros:
            self.circuit_breaker_open = False
        if not self.circuit_breaker_open:
            need_wait = self._reserve_and_get_wait_length(1, now_micros)
            self.last_need_wait_micros = need_wait
            if need_wait > 0:
                self.circuit_breaker_open = True
        return not self.circuit_breaker_open
