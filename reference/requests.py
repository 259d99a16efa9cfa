"""A request as the broker carries it: the decoded command, its RequestTask, and the queue elements.

Mutable, as in Java: a RequestTask's ``stop_run`` is flipped by fast failure after it removed the
task from its queue.

Sources: R/protocol/RemotingCommand.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java#L47-L653), R/netty/RequestTask.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L23-L88), FutureTaskExt and
BrokerFastFailure.castRunnable (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/latency/BrokerFastFailure.java#L69-L80).
"""

from __future__ import annotations

from dataclasses import dataclass



@dataclass(frozen=True)
class RemotingCommand:
    """A decoded request command (only the fields the broker's overload path reads)."""

    opaque: int  # the id its response echoes
    code: int  # any int: the spec names some as RequestCode
    topic: str  # the send header's topic; "" if the request has none
    oneway: bool  # isOnewayRPC()


class RequestTask:
    """``RequestTask implements Runnable``: the command, its creation time, and ``stopRun``."""

    def __init__(self, command: RemotingCommand, create_timestamp: int) -> None:
        self.command = command
        self.create_timestamp = create_timestamp  # System.currentTimeMillis() in the constructor
        self.stop_run = False  # volatile; set by BrokerFastFailure after it removed the task


class FutureTaskExt:
    """The ``FutureTask`` subclass the broker's executors wrap each submitted Runnable in."""

    def __init__(self, runnable: RequestTask) -> None:
        self.runnable = runnable


class InternalTask:
    """A queue element that is not a RequestTask in a FutureTaskExt (a plain FutureTask of broker code)."""

    def __init__(self, task_id: int) -> None:
        self.task_id = task_id

    def run(self) -> None:
        """What broker code submitted; nothing the overload path can see."""


QueueItem = FutureTaskExt | InternalTask


def cast_runnable(item: QueueItem) -> RequestTask | None:
    """``BrokerFastFailure.castRunnable``: the RequestTask inside a FutureTaskExt, else null."""
    return item.runnable if isinstance(item, FutureTaskExt) else None
