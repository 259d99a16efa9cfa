"""The spec's token bucket against Guava SmoothBursty arithmetic, computed by hand.

RateLimiter.create(2.0): stableIntervalMicros = 500 000, maxPermits = 2.0, storedPermits = 0.0,
nextFreeTicketMicros = 0 (semantics of SmoothRateLimiter.resync / reserveEarliestAvailable).
"""

from __future__ import annotations

import pytest

from spec.limiter import TokenBucket, circuit_breaker_acquire, create_bucket, guava_try_acquire


def test_a_new_bucket_has_no_stored_burst() -> None:
    assert create_bucket(2.0) == TokenBucket(500_000.0, 2.0, 0.0, 0)
    with pytest.raises(ValueError, match="permits_per_second"):
        create_bucket(0.0)


def test_guava_try_acquire_charges_the_next_caller_and_refuses_without_reserving() -> None:
    b = create_bucket(2.0)
    steps = [
        # (now µs, admitted, stored after, next free ticket after)
        (0, True, 0.0, 500_000),  # first permit is free; its cost moves the next ticket
        (100_000, False, 0.0, 500_000),  # next ticket in the future: refused, nothing reserved
        (500_000, True, 0.0, 1_000_000),
        (3_000_000, True, 1.0, 3_000_000),  # 2 s idle: 4 permits earned, capped at maxPermits 2
        (3_000_000, True, 0.0, 3_000_000),
        (3_000_000, True, 0.0, 3_500_000),  # nothing stored: admitted now, paid by the next caller
        (3_000_000, False, 0.0, 3_500_000),
    ]
    for now, admitted, stored, next_free in steps:
        ok, b = guava_try_acquire(b, now)
        assert (ok, b.stored_permits, b.next_free_ticket_micros) == (admitted, stored, next_free), f"at {now} µs"


def test_the_article_breaker_reserves_then_opens_and_stays_open_for_the_open_time() -> None:
    b = create_bucket(2.0)
    ok, b = circuit_breaker_acquire(b, 0, 1_000_000)
    assert ok and b.next_free_ticket_micros == 500_000 and not b.circuit_open
    ok, b = circuit_breaker_acquire(b, 100_000, 1_000_000)  # would wait 400 000 µs: reserved anyway, breaker opens
    assert not ok and b.circuit_open and b.last_need_wait_micros == 400_000 and b.next_free_ticket_micros == 1_000_000
    ok, b2 = circuit_breaker_acquire(b, 200_000, 1_000_000)  # open: denied without touching the bucket
    assert not ok and b2 == b
    ok, b = circuit_breaker_acquire(b, 1_999_999, 1_000_000)  # now - next = 999 999 < open time
    assert not ok and b.circuit_open
    ok, b = circuit_breaker_acquire(b, 2_000_000, 1_000_000)  # >= open time: closes, 2 permits earned, one spent
    assert ok and not b.circuit_open and b.stored_permits == 1.0 and b.last_need_wait_micros == 0


def test_the_wait_is_truncated_like_javas_long_cast() -> None:
    b = create_bucket(3.0)  # interval 333 333.33… µs
    _, b = guava_try_acquire(b, 0)
    assert b.next_free_ticket_micros == 333_333
