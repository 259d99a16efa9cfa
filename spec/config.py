"""Broker configuration: the values that matter to overload protection.

:func:`broker_config` builds one from a profile's defaults; keyword overrides give the small
configurations that exhaustive exploration and tests need (a queue of two, a pool of two, a
coarse clock). Nothing here is test-specific: these are the broker's own keys.

Sources: C/BrokerConfig.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/common/src/main/java/org/apache/rocketmq/common/BrokerConfig.java#L29-L2063), S/config/MessageStoreConfig.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/config/MessageStoreConfig.java#L28-L1953).
"""

from __future__ import annotations

import enum
from dataclasses import field, replace

from spec.frozen import record
from spec.profiles import ExecutorName, Profile

#: ``isOSPageCacheBusy``'s upper bound, a hard literal in milliseconds (S/DefaultMessageStore.java).
BUSY_UPPER_BOUND_MS = 10_000_000

#: ``scheduleAtFixedRate(task, 1000, 10, MILLISECONDS)`` in every version (BrokerFastFailure.start).
JAVA_FAST_FAILURE_INITIAL_DELAY_MS = 1000
JAVA_FAST_FAILURE_PERIOD_MS = 10


class FlushDiskType(enum.Enum):
    """MessageStoreConfig.flushDiskType (default ASYNC_FLUSH)."""

    ASYNC_FLUSH = "ASYNC_FLUSH"
    SYNC_FLUSH = "SYNC_FLUSH"


@record
class ExecutorConfig:
    """One executor as configured: fixed thread count (core = max) and queue capacity."""

    name: ExecutorName
    threads: int  # *ThreadPoolNums; core = max
    capacity: int | None  # *QueueCapacity; None = unbounded LinkedBlockingQueue


#: The token bucket's rates the spec computes with: a permit every 1000 s at the least, a billion a
#: second at the most. Beyond them the bucket's doubles leave the range its arithmetic is exact in
#: (an infinite rate divides by a zero interval; a rate of 1e-320 a second has an infinite one), so
#: a header outside is refused rather than judged.
QPS_RANGE = (1e-3, 1e9)


@record
class RateLimitConfig:
    """The per-topic limiter of source 004 (an extension: no RocketMQ release has it)."""

    enabled: bool = False  # RateLimitHandler.disabled is the negation; off by default here
    default_qps: float = 2000.0  # RateLimitHandler.defaultLimitQps
    send_msg_back_qps: float = 100.0  # RateLimitHandler.sendMsgBackLimitQps
    circuit_breaker_open_micros: int = 1_000_000  # "熔断超过阈值（默认1秒）"


@record
class BrokerConfig:
    """The configuration of one broker under one profile."""

    profile: Profile
    processors: int  # Runtime.availableProcessors(), the P of the thread formulas
    io_threads: int  # remoting threads that dispatch requests concurrently
    executors: tuple[ExecutorConfig, ...]  # in the profile's order
    queue_waits: tuple[tuple[ExecutorName, int], ...]  # waitTimeMillsIn*Queue, phase-2 order
    os_page_cache_busy_timeout_ms: int = 1000  # osPageCacheBusyTimeOutMills
    fast_failure_enable: bool = True  # brokerFastFailureEnable (4.2.0+; read each tick)
    transient_store_pool_enable: bool = False  # transientStorePoolEnable
    transient_store_pool_size: int = 5  # transientStorePoolSize
    mapped_file_size: int = 4  # mappedFileSizeCommitLog, in messages (see Simplification below)
    flush_disk_type: FlushDiskType = FlushDiskType.ASYNC_FLUSH
    default_processor_registered: bool = True  # the broker registers AdminBrokerProcessor as default
    rate_limit: RateLimitConfig = field(default_factory=RateLimitConfig)
    start_time_ms: int = 1  # the clock's first reading; must be > 0 (0 is beginTimeInLock's idle value)
    fast_failure_initial_delay_ms: int = JAVA_FAST_FAILURE_INITIAL_DELAY_MS  # constant in Java; see below
    fast_failure_period_ms: int = JAVA_FAST_FAILURE_PERIOD_MS  # constant in Java; see below

    # The fast-failure schedule is the same constant in every version. It is a field only so that
    # a small model can scale all of time down together (waits, busy timeout, schedule) and keep
    # the state space small; the Java values are the defaults and every profile uses them.

    # Simplification: the mapped file size is counted in messages, not bytes. Every message has
    # the same size, so "committed == fileSize" (the only buffer return path) keeps its meaning
    # while the state stays small; OS pages and commitCommitLogLeastPages are left out.

    def executor(self, name: ExecutorName) -> ExecutorConfig:
        """The configuration of one executor."""
        for e in self.executors:
            if e.name is name:
                return e
        raise KeyError(f"profile {self.profile.version} has no {name.value} executor")

    @property
    def pool_enabled(self) -> bool:
        """Whether the TransientStorePool is in use, under the profile's predicate.

        Source: MessageStoreConfig.isTransientStorePoolEnable (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/config/MessageStoreConfig.java#L1122-L1124) (4.0.0–4.9.8: flag && ASYNC_FLUSH
        && role != SLAVE), 5.0.0 drops ASYNC_FLUSH, 5.1.0+ DefaultMessageStore's predicate. Simplification: the broker is a master (slave roles are not modelled).
        """
        if not self.transient_store_pool_enable:
            return False
        if self.profile.pool_requires_async_flush:
            return self.flush_disk_type is FlushDiskType.ASYNC_FLUSH
        return True

    def validate(self) -> None:
        """Raise ValueError naming the field when a value cannot describe a broker."""
        problems: list[str] = []
        if self.start_time_ms <= 0:
            problems.append(f"start_time_ms={self.start_time_ms} must be > 0")
        if self.fast_failure_period_ms < 1:
            problems.append(f"fast_failure_period_ms={self.fast_failure_period_ms} must be >= 1")
        if self.fast_failure_initial_delay_ms < 0:
            problems.append(f"fast_failure_initial_delay_ms={self.fast_failure_initial_delay_ms} must be >= 0")
        if not any(e.name is ExecutorName.SEND for e in self.executors):
            problems.append("executors must include the send executor")
        if self.io_threads < 1:
            problems.append(f"io_threads={self.io_threads} must be >= 1")
        if self.mapped_file_size < 1:
            problems.append(f"mapped_file_size={self.mapped_file_size} must be >= 1")
        if self.transient_store_pool_size < 0:
            problems.append(f"transient_store_pool_size={self.transient_store_pool_size} must be >= 0")
        for name in ("default_qps", "send_msg_back_qps"):
            qps = getattr(self.rate_limit, name)
            if not QPS_RANGE[0] <= qps <= QPS_RANGE[1]:  # false for NaN too
                problems.append(
                    f"rate_limit.{name}={qps} must be a number from {QPS_RANGE[0]:g} to {QPS_RANGE[1]:g} permits a second"
                )
        if self.rate_limit.circuit_breaker_open_micros < 0:
            problems.append(f"rate_limit.circuit_breaker_open_micros={self.rate_limit.circuit_breaker_open_micros} must be >= 0")
        known = [name for name, _ in self.profile.executors]
        names = [e.name for e in self.executors]
        foreign = [n.value for n in names if n not in known]
        if foreign or len(set(names)) != len(names):
            problems.append(
                f"executors {[n.value for n in names]} must name each at most once, and only executors release "
                f"{self.profile.version} has: {', '.join(n.value for n in known)}"
            )
        cleaned = [q for q, _ in self.profile.cleaned_queues if q in names]
        if [q for q, _ in self.queue_waits] != cleaned:
            problems.append(
                f"queue_waits {[q.value for q, _ in self.queue_waits]} must list, in this order, the queues release "
                f"{self.profile.version}'s BrokerFastFailure cleans among the executors: {[q.value for q in cleaned]}"
            )
        for e in self.executors:
            if e.threads < 1:
                problems.append(f"executors[{e.name.value}].threads={e.threads} must be >= 1")
            if e.capacity is not None and e.capacity < 0:
                problems.append(f"executors[{e.name.value}].capacity={e.capacity} must be >= 0")
        if problems:
            raise ValueError("invalid broker configuration: " + "; ".join(problems))


def broker_config(
    profile: Profile,
    *,
    processors: int = 2,
    io_threads: int = 2,
    threads: dict[ExecutorName, int] | None = None,
    capacities: dict[ExecutorName, int | None] | None = None,
    queue_waits: dict[ExecutorName, int] | None = None,
    executors: tuple[ExecutorName, ...] | None = None,
    **overrides: object,
) -> BrokerConfig:
    """A configuration with the profile's defaults, changed where the caller says.

    ``executors`` restricts the model to some executors (codes of the others must then not be
    sent); ``threads``, ``capacities`` and ``queue_waits`` override per executor; the remaining
    keywords override :class:`BrokerConfig` fields by name.
    """
    threads = threads or {}
    capacities = capacities or {}
    waits = queue_waits or {}
    chosen = [n for n, _ in profile.executors if executors is None or n in executors]
    executor_configs = tuple(
        ExecutorConfig(
            name=name,
            threads=threads.get(name, defaults.threads.threads(processors)),
            capacity=capacities[name] if name in capacities else defaults.capacity,
        )
        for name, defaults in profile.executors
        if name in chosen
    )
    cleaned = tuple((name, waits.get(name, wait)) for name, wait in profile.cleaned_queues if name in chosen)
    config = BrokerConfig(
        profile=profile,
        processors=processors,
        io_threads=io_threads,
        executors=executor_configs,
        queue_waits=cleaned,
    )
    unknown = set(overrides) - set(BrokerConfig.__dataclass_fields__)
    if unknown:
        raise TypeError(f"unknown BrokerConfig field(s): {', '.join(sorted(unknown))}")
    config = replace(config, **overrides)  # type: ignore[arg-type]
    config.validate()
    return config
