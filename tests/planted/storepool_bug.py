"""spec.storepool.return_buffer, planted bug: the buffer goes back to the tail (``offer``) instead of
the head (``offerFirst``), so reuse would be FIFO where Java's is LIFO (corner 32)."""

from __future__ import annotations


def return_buffer(available: tuple[int, ...], buffer: int) -> tuple[int, ...]:
    """``returnBuffer(bb)``: reset position/limit, ``offerFirst``: so reuse is LIFO (corner 32).

    pre: buffer not in available
    post: __return__[0] == buffer and __return__[1:] == available
    """
    return available + (buffer,)  # planted: offer instead of offerFirst
