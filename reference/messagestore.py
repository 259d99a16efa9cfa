"""DefaultMessageStore: the commit log, the TransientStorePool and the commit service, and the two
questions the broker asks the store before a put: is the page cache busy, is the pool deficient.

Sources: S/DefaultMessageStore.java isOSPageCacheBusy (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java#L674-L680), remainTransientStoreBufferNumbs,
isTransientStorePoolDeficient, and its constructor (the pool is initialised and the commit service
started only when the pool is enabled).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spec.config import BUSY_UPPER_BOUND_MS

if TYPE_CHECKING:
    from reference.broker import Broker

INTEGER_MAX_VALUE = 2**31 - 1


class DefaultMessageStore:
    """What the store holds; the commit service exists only with the pool enabled."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        config = broker.config
        self.commit_log = broker.commit_log_class(broker)
        self.transient_store_pool = broker.transient_store_pool_class(config.transient_store_pool_size)
        self.commit_service = None
        if config.pool_enabled:
            self.transient_store_pool.init()
            self.commit_service = broker.commit_service_class(broker)

    def is_os_page_cache_busy(self) -> bool:
        """``diff < 10000000 && diff > osPageCacheBusyTimeOutMills`` with ``diff = now - beginTimeInLock``.

        With epoch clocks ``beginTimeInLock == 0`` makes the diff huge; on this small clock the idle
        value has to be said explicitly (corner 2).
        """
        begin = self.commit_log.begin_time_in_lock
        if begin == 0:
            return False
        diff = self.broker.now - begin
        return diff < BUSY_UPPER_BOUND_MS and diff > self.broker.config.os_page_cache_busy_timeout_ms

    def remain_transient_store_buffer_numbs(self) -> int:
        """The available count, or Integer.MAX_VALUE when the pool is not in use."""
        if not self.broker.config.pool_enabled:
            return INTEGER_MAX_VALUE
        return self.transient_store_pool.available_buffer_nums()

    def is_transient_store_pool_deficient(self) -> bool:
        """``remainTransientStoreBufferNumbs() == 0`` (every version)."""
        return self.remain_transient_store_buffer_numbs() == 0
