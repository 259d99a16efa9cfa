"""The reference's TokenBucketRateLimiter against Guava SmoothBursty values computed by hand."""

from __future__ import annotations

import pytest

from reference.ratelimit import LONG_MAX, TokenBucketRateLimiter, java_long, saturated_add

CREATED_AT_MS = 1000
OPEN_MICROS = 1_000_000


def _limiter(qps: float) -> TokenBucketRateLimiter:
    return TokenBucketRateLimiter(qps, CREATED_AT_MS, OPEN_MICROS)


def test_a_new_limiter_has_no_stored_burst() -> None:
    limiter = _limiter(2.0)
    assert (limiter.stable_interval_micros, limiter.max_permits, limiter.stored_permits) == (500_000.0, 2.0, 0.0)
    assert limiter.next_free_ticket_micros == 0 and not limiter.circuit_breaker_open


def test_decisions_follow_guava_and_the_breaker() -> None:
    """2 permits/s (a 500 ms interval), breaker open for 1 s. Each line: (ms after creation,
    admitted, nextFreeTicketMicros, storedPermits, lastNeedWaitMicrosecs, breaker open)."""
    limiter = _limiter(2.0)
    expected = [
        # t=0: nothing stored, the permit is free now and its cost (500 ms) moves the next ticket.
        (0, True, 500_000, 0.0, 0, False),
        # t=100 ms: the previous debt makes this one wait 400 ms: it opens the breaker (and reserves).
        (100, False, 1_000_000, 0.0, 400_000, True),
        # t=200 ms: open, and now - nextFree = -800 ms < 1 s: denied without touching the bucket.
        (200, False, 1_000_000, 0.0, 400_000, True),
        # t=2 s: now - nextFree = 1 s >= 1 s closes it; resync stores min(2, 1 s / 500 ms) = 2 permits.
        (2000, True, 2_000_000, 1.0, 0, False),
        (2000, True, 2_000_000, 0.0, 0, False),
        # No stored permit left: admitted at once, the cost goes onto the next caller.
        (2000, True, 2_500_000, 0.0, 0, False),
        (2000, False, 3_000_000, 0.0, 500_000, True),
    ]
    for after_ms, admitted, next_free, stored, need_wait, is_open in expected:
        got = limiter.acquire(CREATED_AT_MS + after_ms)
        actual = (after_ms, got, limiter.next_free_ticket_micros, limiter.stored_permits,
                  limiter.last_need_wait_micros, limiter.circuit_breaker_open)
        assert actual == (after_ms, admitted, next_free, stored, need_wait, is_open)


def test_the_wait_is_truncated_like_a_java_long_cast() -> None:
    limiter = _limiter(3.0)  # interval 333333.33... µs
    assert limiter.acquire(CREATED_AT_MS)
    assert limiter.next_free_ticket_micros == 333_333


def test_stored_permits_are_capped_at_one_second_of_rate() -> None:
    limiter = _limiter(4.0)
    assert limiter.acquire(CREATED_AT_MS)  # next ticket at 250 ms
    assert limiter.acquire(CREATED_AT_MS + 10_000)  # 9.75 s idle would store 39 permits; the cap is 4
    assert limiter.stored_permits == 3.0


def test_a_rate_must_be_positive() -> None:
    with pytest.raises(ValueError, match="rate must be positive"):
        _limiter(0.0)


def test_java_arithmetic_helpers() -> None:
    assert java_long(-2.9) == -2 and java_long(float("nan")) == 0 and java_long(1e30) == LONG_MAX
    assert saturated_add(LONG_MAX, 1) == LONG_MAX
