"""rocketmq-flowspec: an executable specification of Apache RocketMQ's broker overload protection.

Scope. How a RocketMQ broker decides to answer a producer ``[REJECTREQUEST]system busy``,
``[OVERLOAD]system busy``, ``[PC_SYNCHRONIZED]broker busy``, ``[PCBUSY_CLEAN_QUEUE]broker busy``
or ``[TIMEOUT_CLEAN_QUEUE]broker busy``: the dispatch of requests to bounded executor queues
(:mod:`spec.remoting`), the executor workers and the commit-log put lock whose hold time decides
"page cache busy" (:mod:`spec.workers`, :mod:`spec.putlock`), the TransientStorePool of write
buffers and the commit service that returns them (:mod:`spec.storepool`,
:mod:`spec.commitservice`), BrokerFastFailure's queue cleaning every 10 ms
(:mod:`spec.fastfailure`), the sync producer's retry decision (:mod:`spec.client`), and the
per-topic token bucket with a circuit breaker of source 004 (:mod:`spec.limiter`; an extension,
off by default).

Reading order. :mod:`spec.codes` (the wire vocabulary) → :mod:`spec.profiles` (what a
version decides) → :mod:`spec.releases` (every release from 4.0.0 to 5.3.3, built from where each
behaviour changed) → :mod:`spec.config` → :mod:`spec.state` (the state, and a step's outputs) →
:mod:`spec.actors` (who takes each action) → the actors' modules, each action declared beside
its guard and effect (:mod:`spec.remoting`, :mod:`spec.workers`, :mod:`spec.commitservice`,
:mod:`spec.fastfailure`, :mod:`spec.environment`) → :mod:`spec.machine` (``enabled``/``step``)
→ :mod:`spec.invariants` (the claims and the monitors).

Sources. The Java source of apache/rocketmq at its release tags: each rule cites the file,
method and lines as a link at the tag it was read at, and :mod:`spec.releases` cites where each
difference between releases comes from. docs/sources.md says, in this project's words, what each
source is, including the five articles on production incidents the project started from.

Non-goals (each also stated where it would apply):
- GO_AWAY during shutdown (5.2.0+), slave roles and slaveActingMaster: the broker is a running master.
- The proxy's 10 s cleaner and the rust port's divergences: other implementations, judged by
  their traces against this spec rather than specified here.
- Flush, replication waits, message validation, reads and consumption: they do not decide any
  of the five answers.
- Exceptions that kill the fast-failure schedule (corner 28) and ``submit`` failures other than
  RejectedExecutionException (corner 11).

Everything is pure: frozen dataclasses in, frozen dataclasses out; the only clock is ``now``.
"""
