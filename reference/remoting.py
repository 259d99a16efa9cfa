"""NettyRemotingServer: the handler threads that dispatch requests, and the channels answers go out on.

A handler thread decodes a command, passes it through the rate-limit handler (when on), looks up
its processor, asks the processor whether to reject, wraps the command in a RequestTask and
submits it, answering NOT_SUPPORTED, [REJECTREQUEST] or [OVERLOAD] on the way (corner 7). For
each RequestTask it builds the closure a worker runs: the processor's work, a callback that
writes the processor's response, and a ``catch (Throwable)`` that answers SYSTEM_ERROR. Every
response goes out through :meth:`NettyRemotingServer.write_response`, where each writer has its
own rule for oneway requests (corner 8).

Sources: R/netty/NettyRemotingAbstract.java processMessageReceived (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L178-L191) and processRequestCommand,
R/netty/RequestTask.java returnResponse (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L83-L87).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from reference.executor import BrokerFixedThreadPoolExecutor, RejectedExecutionError, WorkerThread
from reference.processors import Processor, SendMessageProcessor, admin_broker_processor, processor_table
from reference.requests import FutureTaskExt, RemotingCommand, RequestTask
from reference.threads import InjectedFault, ThreadBody
from spec import state
from spec.actors import Action
from spec.codes import OVERLOAD_REMARK, REJECT_REQUEST_REMARK, ResponseCode, ResponseKind, not_supported_remark
from spec.profiles import ExecutorName
from spec.remoting import (
    DispatchAnswersNotSupported,
    DispatchCreatesTask,
    DispatchQueuesTask,
    DispatchRejectsOverload,
    DispatchRejectsRequest,
    DispatchStartsWorker,
)
from spec.workers import WorkerProcessesRequest, WorkerThrowsInsideLock

if TYPE_CHECKING:
    from reference.broker import Broker


class Writer(enum.Enum):
    """Which code path writes a response; each has its own rule for oneway requests."""

    DISPATCH = "processRequestCommand on the IO thread"
    CALLBACK = "the processor's response callback on the worker"
    DIRECT = "channel.writeAndFlush: RequestTask.returnResponse, the rate-limit handler"


class IoThreadContext:
    """One Netty handler thread and the request it is running processRequestCommand on."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.command: RemotingCommand | None = None  # the request being handled; None = waiting
        self.passed_limiter = False  # the rate-limit handler fired the request on to the dispatcher
        self.task: RequestTask | None = None  # built by processRequestCommand, not yet submitted
        self.limiter_pool_rejects = False  # injected: the limiter's own executor rejects the next task

    def finish(self) -> None:
        """Back to reading the next request."""
        self.command = None
        self.passed_limiter = False
        self.task = None


class Channels:
    """What the broker wrote to its clients, and what the current step did besides: the step's outputs."""

    def __init__(self) -> None:
        self.responses: list[state.Response] = []  # every response written, in order
        self._step_mark = 0  # index in responses where the current step began
        self.finished_silently: list[int] = []  # requests the current step finished without a response
        self.started: list[int] = []  # requests whose processor the current step began

    def begin_step(self) -> None:
        self._step_mark = len(self.responses)
        self.finished_silently.clear()
        self.started.clear()

    def step_outputs(self) -> state.Outputs:
        """The current step's outputs, as the spec's step returns them."""
        written = tuple(self.responses[self._step_mark :])
        return state.Outputs(written, tuple(self.finished_silently), tuple(self.started))


class NettyRemotingServer:
    """The request side of NettyRemotingAbstract, with the processor table BrokerController registers."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        config = broker.config
        self.send_message_processor = broker.send_message_processor_class(broker)
        self.processor_table = processor_table(broker, self.send_message_processor)
        self.default_processor: tuple[Processor, ExecutorName] | None = (
            (admin_broker_processor(broker), ExecutorName.ADMIN) if config.default_processor_registered else None
        )
        self.next_request_id = 1  # the opaque of the next request decoded
        self.io_threads = [IoThreadContext(i) for i in range(config.io_threads)]
        self.bodies = [self._handler_thread(io) for io in self.io_threads]
        self.channels = Channels()

    # ---------------------------------------------------------------- answers

    def oneway_answer_written(self, writer: Writer, kind: ResponseKind) -> bool:
        """Whether a response reaches a oneway client.

        The dispatcher wrote NOT_SUPPORTED and [REJECTREQUEST] unconditionally in 4.0.0–5.0.0 and
        drops them in writeResponse from 5.1.0; [OVERLOAD] is guarded by ``!isOnewayRPC()`` in every
        version; the processor's callback never answers oneway; ``channel.writeAndFlush`` (fast
        failure's returnResponse, the rate-limit handler) always writes.
        Source: NettyRemotingAbstract.processRequestCommand (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java#L259-L317), RequestTask.returnResponse (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/remoting/src/main/java/org/apache/rocketmq/remoting/netty/RequestTask.java#L83-L87) (corner 8).
        """
        match writer:
            case Writer.DISPATCH:
                return kind is not ResponseKind.OVERLOAD and self.broker.profile.dispatch_answers_oneway
            case Writer.CALLBACK:
                return False
            case Writer.DIRECT:
                return True

    def write_response(self, writer: Writer, command: RemotingCommand, response: state.Response | None) -> None:
        """Write ``response`` to the request's channel, or finish the request silently."""
        if response is None or (command.oneway and not self.oneway_answer_written(writer, response.kind)):
            self.channels.finished_silently.append(command.opaque)
        else:
            self.channels.responses.append(response)

    def reject_request_remark(self) -> str:
        """The [REJECTREQUEST] remark (the rust port writes ``[REJECT REQUEST]``)."""
        return REJECT_REQUEST_REMARK

    # ---------------------------------------------------------------- the handler threads

    def find_processor(self, code: int) -> tuple[Processor, ExecutorName] | None:
        """``processorTable.get(code)``, else ``defaultRequestProcessorPair``."""
        return self.processor_table.get(code, self.default_processor)

    def _handler_thread(self, io: IoThreadContext) -> ThreadBody:
        """A Netty event-loop thread: the rate-limit handler (if on), then processRequestCommand."""
        limiter = self.broker.rate_limit_handler
        while True:
            command = io.command
            if command is None:
                yield None
            elif not io.passed_limiter and limiter.rate_limit_applies(command):
                yield limiter.channel_read(io, command)
            else:
                yield from self._process_request_command(io, command)

    def _process_request_command(self, io: IoThreadContext, command: RemotingCommand) -> ThreadBody:
        """processRequestCommand: lookup → NOT_SUPPORTED → rejectRequest → new RequestTask → submit →
        [OVERLOAD] (corner 7). Creating and submitting are two steps."""
        found = self.find_processor(command.code)
        if found is None:
            response = state.Response(
                command.opaque,
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                not_supported_remark(command.code),
                ResponseKind.NOT_SUPPORTED,
            )
            self.write_response(Writer.DISPATCH, command, response)
            io.finish()
            yield DispatchAnswersNotSupported(io.index)
            return
        processor, executor = found
        if processor.reject_request():
            response = state.Response(
                command.opaque, ResponseCode.SYSTEM_BUSY, self.reject_request_remark(), ResponseKind.REJECT_REQUEST
            )
            self.write_response(Writer.DISPATCH, command, response)
            io.finish()
            yield DispatchRejectsRequest(io.index)
            return
        task = RequestTask(command, create_timestamp=self.broker.now)
        io.task = task
        yield DispatchCreatesTask(io.index)
        io.finish()
        yield self._submit(io.index, self.broker.executors[executor], task)

    def _submit(self, io_index: int, executor: BrokerFixedThreadPoolExecutor, task: RequestTask) -> Action:
        """``executor.submit(task)``; a RejectedExecutionException is answered [OVERLOAD], never to a
        oneway request."""
        try:
            started = executor.execute(FutureTaskExt(task))
        except RejectedExecutionError:
            command = task.command
            response = state.Response(command.opaque, ResponseCode.SYSTEM_BUSY, OVERLOAD_REMARK, ResponseKind.OVERLOAD)
            self.write_response(Writer.DISPATCH, command, response)
            return DispatchRejectsOverload(io_index)
        return DispatchStartsWorker(io_index) if started else DispatchQueuesTask(io_index)

    # ---------------------------------------------------------------- the closure a worker runs

    def run_task(self, worker: WorkerThread, task: RequestTask) -> ThreadBody:
        """The Runnable processRequestCommand wraps each request in: run the processor, then the
        callback writes its response; ``catch (Throwable e)`` answers SYSTEM_ERROR with
        exceptionSimpleDesc(e), written by the callback (so not for oneway)."""
        command = task.command
        found = self.find_processor(command.code)
        assert found is not None, "only a routed request becomes a RequestTask"
        processor, _ = found
        self.channels.started.append(command.opaque)
        response: state.Response | None
        action: Action
        try:
            if isinstance(processor, SendMessageProcessor):
                response, action = yield from processor.put_message(worker, command)
            else:
                response, action = processor.process_request(command), WorkerProcessesRequest(worker.executor, worker.index)
        except InjectedFault:
            response = state.Response(command.opaque, ResponseCode.SYSTEM_ERROR, None, ResponseKind.EXCEPTION)
            action = WorkerThrowsInsideLock(worker.executor, worker.index)
        worker.finish()
        self.write_response(Writer.CALLBACK, command, response)
        yield action
