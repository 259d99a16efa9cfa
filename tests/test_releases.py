"""Every release is a profile built from where each behaviour changed, and each change is pinned.

For every pair of consecutive releases whose profiles differ, the spec and the reference broker
run in lockstep on both sides of the boundary, with requests of the codes whose routing or
answer changes across releases, so a behaviour is checked at the last release before its change
and the first after it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spec.codes import RequestCode
from spec.config import BrokerConfig
from spec.machine import Environment, RequestTemplate
from spec.profiles import ExecutorName, Profile
from spec.releases import (
    ADMIN_CASES,
    BEHAVIOURS,
    EXECUTORS,
    EXPLORED,
    PROFILES,
    REGISTRATIONS,
    RELEASES,
    github,
    profile,
    release_tag,
)
from test_reference_lockstep import Scenario, lockstep_walk, small_broker

LINK = re.compile(r"https://github\.com/apache/rocketmq/blob/rocketmq-(all-)?\d+\.\d+\.\d+(-incubating)?/[\w/.-]+\.java#L\d+(-L\d+)?")


def test_every_release_has_a_profile_named_after_it() -> None:
    assert [profile(r).version for r in RELEASES] == list(RELEASES)
    assert list(PROFILES) == list(EXPLORED)


def test_an_unknown_release_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown RocketMQ release '4\.5\.0'; known releases: 4\.0\.0, 4\.1\.0, .*5\.3\.3"):
        profile("4.5.0")


def test_release_tags_follow_apache_rocketmq() -> None:
    assert release_tag("4.0.0") == "rocketmq-4.0.0-incubating"
    assert release_tag("4.1.0") == "rocketmq-all-4.1.0-incubating"
    assert release_tag("5.3.3") == "rocketmq-all-5.3.3"


def test_every_row_cites_a_line_of_the_java_source_at_its_release() -> None:
    links = [r.source for r in REGISTRATIONS] + [c.source for c in ADMIN_CASES] + [e.source for e in EXECUTORS]
    links += [source for b in BEHAVIOURS for _, _, source in b.changes]
    bad = [link for link in links if not LINK.fullmatch(link)]
    assert not bad, bad
    assert github("4.9.1", "a/B.java", 3, 7).endswith("/rocketmq-all-4.9.1/a/B.java#L3-L7")


def test_each_behaviour_changes_where_its_table_says() -> None:
    for b in BEHAVIOURS:
        for (_, before, _), (first, after, _) in zip(b.changes, b.changes[1:]):
            previous = RELEASES[RELEASES.index(first) - 1]
            assert getattr(profile(previous), b.field) == before != after == getattr(profile(first), b.field), (b.field, first)


# Known values on both sides of boundaries the broker's users meet (semantics digest tables 1.4, 2.3, 4.5).
@pytest.mark.parametrize(
    ("release", "code", "executor"),
    [
        ("4.0.0", RequestCode.SEND_BATCH_MESSAGE, ExecutorName.ADMIN),  # not registered in 4.0.0
        ("4.1.0", RequestCode.SEND_BATCH_MESSAGE, ExecutorName.SEND),
        ("4.1.0", RequestCode.QUERY_MESSAGE, ExecutorName.PULL),
        ("4.2.0", RequestCode.QUERY_MESSAGE, ExecutorName.QUERY),
        ("4.2.0", RequestCode.HEART_BEAT, ExecutorName.CLIENT_MANAGE),
        ("4.3.0", RequestCode.HEART_BEAT, ExecutorName.HEARTBEAT),
        ("4.3.0", RequestCode.END_TRANSACTION, ExecutorName.SEND),
        ("4.3.1", RequestCode.END_TRANSACTION, ExecutorName.END_TRANSACTION),
        ("5.3.1", RequestCode.RECALL_MESSAGE, ExecutorName.ADMIN),
        ("5.3.2", RequestCode.RECALL_MESSAGE, ExecutorName.SEND),
        ("4.9.8", 15, ExecutorName.CONSUMER_MANAGE),  # UPDATE_CONSUMER_OFFSET
        ("5.0.0", 400, ExecutorName.LOAD_BALANCE),  # QUERY_ASSIGNMENT
    ],
)
def test_codes_are_routed_as_the_release_registers_them(release: str, code: int, executor: ExecutorName) -> None:
    assert profile(release).executor_for(code) is executor


def test_the_admin_switch_follows_the_release() -> None:
    assert 18 not in profile("5.2.0").admin_codes and 18 in profile("5.3.0").admin_codes  # UPDATE_AND_CREATE_TOPIC_LIST
    acl = 54  # GET_BROKER_CLUSTER_ACL_CONFIG: 4.6.0–4.9.7, then 5.0.0–5.1.4
    assert [acl in profile(r).admin_codes for r in ("4.5.2", "4.6.0", "4.9.7", "4.9.8", "5.0.0", "5.1.4", "5.2.0")] == [
        False, True, True, False, True, True, False,
    ]  # fmt: skip


BOUNDARY_CODES = (
    RequestTemplate(RequestCode.SEND_MESSAGE, "TopicA"),
    RequestTemplate(RequestCode.SEND_MESSAGE_V2, "TopicB", oneway=True),
    RequestTemplate(RequestCode.CONSUMER_SEND_MSG_BACK, "%RETRY%group"),
    RequestTemplate(RequestCode.SEND_BATCH_MESSAGE, "TopicA"),
    RequestTemplate(RequestCode.END_TRANSACTION, "TopicA"),
    RequestTemplate(RequestCode.QUERY_MESSAGE, "TopicA"),
    RequestTemplate(RequestCode.HEART_BEAT, ""),
    RequestTemplate(RequestCode.RECALL_MESSAGE, "TopicA"),
    RequestTemplate(15, ""),  # UPDATE_CONSUMER_OFFSET: consumerManage, a code the spec has no name for
    RequestTemplate(18, ""),  # UPDATE_AND_CREATE_TOPIC_LIST: an admin case from 5.3.0
    RequestTemplate(RequestCode.UNKNOWN, ""),
    RequestTemplate(RequestCode.UNKNOWN, "", oneway=True),
)


def _every_executor_small(p: Profile) -> BrokerConfig:
    names = tuple(name for name, _ in p.executors)
    return small_broker(
        p,
        executors=names,
        threads={n: 1 for n in names},
        capacities={n: 1 for n in names},
        queue_waits={n: 2 for n in names},
    )


def _boundary_releases() -> list[str]:
    """Both sides of every pair of consecutive releases whose profiles differ."""
    sides: set[str] = set()
    for before, after in zip(RELEASES, RELEASES[1:]):
        a, b = profile(before), profile(after)
        if {k: v for k, v in vars(a).items() if k != "version"} != {k: v for k, v in vars(b).items() if k != "version"}:
            sides |= {before, after}
    return sorted(sides, key=RELEASES.index)


@pytest.mark.parametrize("release", _boundary_releases())
def test_spec_and_reference_agree_on_both_sides_of_every_change(release: str) -> None:
    env = Environment(
        requests=BOUNDARY_CODES,
        max_requests=30,
        clock_steps=(1, 2),
        max_elapsed_ms=60,
        exceptions_in_lock=True,
        ha_appends=True,
        fast_failure_toggles=(True, False),
    )
    scenario = Scenario(f"{release}-every-executor", _every_executor_small(profile(release)), env)
    for seed in range(2):
        assert lockstep_walk(scenario, steps=250, seed=seed) > 0


@pytest.mark.parametrize("release", ["4.0.0", "4.3.0", "4.9.0", "4.9.4", "5.1.4", "5.3.3"])
def test_a_trace_of_real_request_codes_is_checked_and_routed_as_its_release_routes_it(tmp_path: Path, release: str) -> None:
    from traces.checking.replay import replay_records
    from traces.format.read import read_records, validate
    from traces.recording.record import record_workload

    path = tmp_path / f"every-code-{release}.jsonl"
    record_workload(path, "every-code", release, 400)
    validate([str(path)])  # any Java int is a code: nothing is refused
    records = [r.data for r in read_records([str(path)])]
    codes = {r["code"] for r in records if r["kind"] == "RequestArrives"}
    assert {15, 17, -7, 2**31 - 1} <= codes, codes
    [result] = replay_records(records)
    assert result.verdict == "conformant", result
    # UPDATE_CONSUMER_OFFSET ran on the consumer-manage executor, as every release registers it.
    taken = {r["executor"] for r in records if r["kind"] == "WorkerProcessesRequest"}
    assert "consumerManage" in taken, taken
