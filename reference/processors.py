"""The request processors: which code goes where, what a processor answers, and SendMessageProcessor.

A processor that does not write the commit log answers at once; AdminBrokerProcessor answers the
codes its switch knows and, from 4.9.1, REQUEST_CODE_NOT_SUPPORTED to the rest. SendMessageProcessor
refuses work while the store is busy or its pool deficient (rejectRequest), pre-checks the busy
state again on the worker, and puts the message through the commit log.

Sources: B/BrokerController.java registerProcessor (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java#L1077-L1204), B/processor/AdminBrokerProcessor.java (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java#L234-L3463),
B/processor/SendMessageProcessor.java rejectRequest (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java#L129-L139) and handlePutMessageResult,
S/DefaultMessageStore.java asyncPutMessage (https://github.com/apache/rocketmq/blob/rocketmq-all-5.3.3/store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java#L577-L617).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from reference.requests import RemotingCommand
from spec import state
from spec.actors import Action
from spec.codes import (
    PC_SYNCHRONIZED_REMARK,
    PUT_CODES,
    RequestCode,
    ResponseCode,
    ResponseKind,
    not_supported_remark,
)
from spec.profiles import ExecutorName
from spec.workers import WorkerAppendsAndUnlocks, WorkerFindsPageCacheBusy, WorkerPassesPutCheck

if TYPE_CHECKING:
    from reference.broker import Broker
    from reference.executor import WorkerThread

PutBody = Generator[Action | None, None, tuple[state.Response, Action]]
"""The put path on a worker: its steps, and at the end the response and the step that writes it."""


class Processor:
    """A NettyRequestProcessor registered in the processor table."""

    def __init__(self, broker: Broker, name: str, known_codes: frozenset[int] | None) -> None:
        self.broker = broker
        self.name = name
        self.known_codes = known_codes  # codes its processRequest switch answers; None = all it is registered for

    def reject_request(self) -> bool:
        """``rejectRequest()``: only SendMessageProcessor ever refuses."""
        return False

    def process_request(self, command: RemotingCommand) -> state.Response | None:
        """SUCCESS (its own result, which this reference does not compute) for a code the processor knows; AdminBrokerProcessor's ``default:`` branch answers an
        unknown code REQUEST_CODE_NOT_SUPPORTED from 4.9.1 and returns null (nothing is written) before."""
        if self.known_codes is None or command.code in self.known_codes:
            return state.Response(command.opaque, ResponseCode.SUCCESS, None, ResponseKind.PROCESSOR)
        if self.broker.profile.admin_answers_unknown_code:
            return state.Response(
                command.opaque,
                ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                not_supported_remark(command.code),
                ResponseKind.NOT_SUPPORTED,
            )
        return None


class SendMessageProcessor(Processor):
    """Sends and send-backs: refused while busy or deficient, else through the commit log's put lock."""

    def __init__(self, broker: Broker) -> None:
        super().__init__(broker, "SendMessageProcessor", known_codes=None)

    def reject_request(self) -> bool:
        """SendMessageProcessor.rejectRequest: busy or pool-deficient."""
        store = self.broker.message_store
        return store.is_os_page_cache_busy() or store.is_transient_store_pool_deficient()

    def page_cache_busy_answer(self, code: int) -> tuple[ResponseCode, str]:
        """OS_PAGE(_)CACHE_BUSY → [PC_SYNCHRONIZED] with the profile's code; a send-back answers
        SYSTEM_ERROR with the status name (handlePutMessageResult)."""
        profile = self.broker.profile
        if code == RequestCode.CONSUMER_SEND_MSG_BACK:
            return ResponseCode.SYSTEM_ERROR, profile.page_cache_busy_status
        return profile.pc_synchronized_code, PC_SYNCHRONIZED_REMARK

    def put_message(self, worker: WorkerThread, command: RemotingCommand) -> PutBody:
        """asyncPutMessage: the busy pre-check (HookUtils.checkBeforePutMessage in 5.x), then the commit log."""
        executor, index = worker.executor, worker.index
        if self.broker.message_store.is_os_page_cache_busy():
            code, remark = self.page_cache_busy_answer(command.code)
            return state.Response(command.opaque, code, remark, ResponseKind.PC_SYNCHRONIZED), WorkerFindsPageCacheBusy(
                executor, index
            )
        worker.passed_put_check = True
        yield WorkerPassesPutCheck(executor, index)
        yield from self.broker.message_store.commit_log.put_message(worker)
        return state.Response(command.opaque, ResponseCode.SUCCESS, None, ResponseKind.SUCCESS), WorkerAppendsAndUnlocks(
            executor, index
        )


def processor_table(broker: Broker, send: SendMessageProcessor) -> dict[int, tuple[Processor, ExecutorName]]:
    """``BrokerController.registerProcessor``: code → (processor, executor) for the profile."""
    serving = Processor(broker, "a processor that answers without the commit log", known_codes=None)
    return {code: (send if code in PUT_CODES else serving, executor) for code, executor in broker.profile.executor_of_code}


def admin_broker_processor(broker: Broker) -> Processor:
    """The default processor: AdminBrokerProcessor, whose switch knows the profile's admin codes."""
    return Processor(broker, "AdminBrokerProcessor", known_codes=broker.profile.admin_codes)
