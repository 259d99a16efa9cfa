"""Source 004's RateLimitHandler: a Netty handler before the dispatcher, one token bucket per topic.

A send with a topic takes a permit from its topic's bucket (created on first use with the rate of
the request that created it) or is answered [RateLimit] on the spot; when the handler's own
executor rejects its task, the caller runs it, sees it is not on the event loop and fires the
request on without touching a bucket (fail open).

Source: docs/sources.md, source 004, sections 四.3–四.5 (getResource is not shown there, so the send
header's topic, the %RETRY% topic for a send-back, is the resource).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference.ratelimit import TokenBucketRateLimiter
from reference.remoting import IoThreadContext, Writer
from reference.requests import RemotingCommand
from spec import state
from spec.actors import Action
from spec.codes import PUT_CODES, RequestCode, ResponseCode, ResponseKind, rate_limit_remark
from spec.remoting import RateLimitHandlerAdmits, RateLimitHandlerFailsOpen, RateLimitHandlerThrottles

if TYPE_CHECKING:
    from reference.broker import Broker


class RateLimitHandler:
    """``rateLimiterMap`` and ``channelRead0``."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.rate_limiter_map: dict[str, TokenBucketRateLimiter] = {}

    def rate_limit_applies(self, command: RemotingCommand) -> bool:
        """Send-type requests with a topic go through the limiter."""
        return self.broker.config.rate_limit.enabled and command.code in PUT_CODES and command.topic != ""

    def create_rate_limiter(self, permits_per_second: float) -> TokenBucketRateLimiter:
        """``new TokenBucketRateLimiter(qps)``; its stopwatch starts now."""
        breaker = self.broker.config.rate_limit.circuit_breaker_open_micros
        return TokenBucketRateLimiter(permits_per_second, self.broker.now, breaker)

    def channel_read(self, io: IoThreadContext, command: RemotingCommand) -> Action:
        """channelRead0: acquire from the topic's bucket or answer [RateLimit]."""
        if io.limiter_pool_rejects:
            io.limiter_pool_rejects = False
            io.passed_limiter = True
            return RateLimitHandlerFailsOpen(io.index)
        limiter = self.rate_limiter_map.get(command.topic)
        if limiter is None:  # computeIfAbsent: the creating request's code fixes the rate
            limit = self.broker.config.rate_limit
            qps = limit.send_msg_back_qps if command.code == RequestCode.CONSUMER_SEND_MSG_BACK else limit.default_qps
            limiter = self.create_rate_limiter(qps)
            self.rate_limiter_map[command.topic] = limiter
        if limiter.acquire(self.broker.now):
            io.passed_limiter = True
            return RateLimitHandlerAdmits(io.index)
        remark = rate_limit_remark(command.topic, limiter.last_need_wait_micros)
        response = state.Response(command.opaque, ResponseCode.SYSTEM_BUSY, remark, ResponseKind.RATE_LIMIT)
        self.broker.remoting.write_response(Writer.DIRECT, command, response)
        io.finish()
        return RateLimitHandlerThrottles(io.index)
