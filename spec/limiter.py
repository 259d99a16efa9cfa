"""The per-topic token bucket of source 004: Guava's SmoothBursty, plus a circuit breaker.

This is an extension: no RocketMQ release limits per topic. Source 004
describes a limiter "modified from Guava" in a Netty handler placed before the remoting
dispatcher, one bucket per topic, 2000 QPS by default and 100 QPS for CONSUMER_SEND_MSG_BACK.

The arithmetic follows Guava's SmoothRateLimiter.SmoothBursty exactly (doubles for permits and
the interval, longs for microseconds, ``(long)`` truncation of the wait), so that
:func:`guava_try_acquire` can be compared decision for decision with ``RateLimiter.tryAcquire()``.
Source: Guava 31.1 SmoothRateLimiter.java (https://github.com/google/guava/blob/v31.1/guava/src/com/google/common/util/concurrent/SmoothRateLimiter.java) and RateLimiter.java
(https://github.com/google/guava/blob/v31.1/guava/src/com/google/common/util/concurrent/RateLimiter.java).

:func:`circuit_breaker_acquire` is the article's ``TokenBucketRateLimiter.acquire``: it reserves
unconditionally (no ``canAcquire`` pre-check), and when the reservation would have to wait it
opens the breaker, which denies everything without touching the bucket until
``now - nextFreeTicketMicros >= open time``; it never sleeps.
Source: docs/sources.md, source 004, section 四.5 (the code listing of ``acquire``).
"""

from __future__ import annotations


from spec.frozen import record, replace

MICROS_PER_SECOND = 1_000_000
LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)


@record
class TokenBucket:
    """One SmoothBursty limiter with the article's breaker flag.

    Times are microseconds on the limiter's own stopwatch, which starts at creation.
    """

    stable_interval_micros: float  # SmoothRateLimiter.stableIntervalMicros = 1e6 / permitsPerSecond
    max_permits: float  # SmoothBursty.maxPermits = maxBurstSeconds × permitsPerSecond
    stored_permits: float  # SmoothRateLimiter.storedPermits
    next_free_ticket_micros: int  # SmoothRateLimiter.nextFreeTicketMicros
    circuit_open: bool = False  # TokenBucketRateLimiter.circuitBreakerOpen (source 004)
    last_need_wait_micros: int = 0  # TokenBucketRateLimiter.lastNeedWaitMicrosecs (source 004)


def create_bucket(permits_per_second: float) -> TokenBucket:
    """``RateLimiter.create(qps)``: a SmoothBursty with one second of burst, created at micros 0.

    setRate runs doSetRate at the stopwatch's first reading (0): resync(0) changes nothing, and
    because the old maxPermits is 0.0 the stored permits start at 0.0, not at the burst size.
    """
    if not permits_per_second > 0.0:
        raise ValueError(f"permits_per_second={permits_per_second} must be > 0")
    interval = MICROS_PER_SECOND / permits_per_second
    return TokenBucket(
        stable_interval_micros=interval,
        max_permits=1.0 * permits_per_second,
        stored_permits=0.0,
        next_free_ticket_micros=0,
    )


def _saturated_add(a: int, b: int) -> int:
    """LongMath.saturatedAdd."""
    return max(LONG_MIN, min(LONG_MAX, a + b))


def _resync(b: TokenBucket, now_micros: int) -> TokenBucket:
    """SmoothRateLimiter.resync: turn idle time into stored permits (coolDownInterval = stable interval)."""
    if now_micros <= b.next_free_ticket_micros:
        return b
    new_permits = (now_micros - b.next_free_ticket_micros) / b.stable_interval_micros
    return replace(
        b,
        stored_permits=min(b.max_permits, b.stored_permits + new_permits),
        next_free_ticket_micros=now_micros,
    )


def _reserve_earliest_available(b: TokenBucket, permits: int, now_micros: int) -> tuple[int, TokenBucket]:
    """SmoothRateLimiter.reserveEarliestAvailable: returns (moment available, bucket after)."""
    b = _resync(b, now_micros)
    moment = b.next_free_ticket_micros
    spend = min(float(permits), b.stored_permits)
    fresh = permits - spend
    wait = int(fresh * b.stable_interval_micros)  # Java (long) truncates toward zero; SmoothBursty's stored permits cost 0
    return moment, replace(
        b,
        next_free_ticket_micros=_saturated_add(b.next_free_ticket_micros, wait),
        stored_permits=b.stored_permits - spend,
    )


def reserve_and_get_wait_length(b: TokenBucket, permits: int, now_micros: int) -> tuple[int, TokenBucket]:
    """RateLimiter.reserveAndGetWaitLength: micros the caller would have to wait, and the bucket after."""
    moment, after = _reserve_earliest_available(b, permits, now_micros)
    return max(moment - now_micros, 0), after


def guava_try_acquire(b: TokenBucket, now_micros: int, permits: int = 1) -> tuple[bool, TokenBucket]:
    """``RateLimiter.tryAcquire(permits)`` (timeout 0): no reservation is made when it fails.

    canAcquire ⇔ queryEarliestAvailable(now) - 0 <= now, i.e. nextFreeTicketMicros <= now.
    """
    if b.next_free_ticket_micros > now_micros:
        return False, b
    _, after = reserve_and_get_wait_length(b, permits, now_micros)
    return True, after


def circuit_breaker_acquire(
    b: TokenBucket, now_micros: int, open_micros: int, permits: int = 1
) -> tuple[bool, TokenBucket]:
    """Source 004's ``TokenBucketRateLimiter.acquire``: admit iff the breaker is closed after the call.

    1. If open and ``now - nextFreeTicketMicros >= open_micros``: close it.
    2. If closed: reserve (even when that means waiting); a positive wait opens the breaker and
       is remembered as lastNeedWaitMicrosecs.
    """
    if b.circuit_open and now_micros - b.next_free_ticket_micros >= open_micros:
        b = replace(b, circuit_open=False)
    if not b.circuit_open:
        wait, b = reserve_and_get_wait_length(b, permits, now_micros)
        b = replace(b, last_need_wait_micros=wait)
        if wait > 0:
            b = replace(b, circuit_open=True)
    return not b.circuit_open, b
