"""Progress of a running check on stderr: each phase's Spark tasks (validation, rules, replay), done out of total.

A thread polls Spark's status tracker for the jobs of the phase's job group and moves a tqdm bar;
it is off unless asked for (``flowspec check`` asks when stderr is a terminal), so logs and CI
output stay clean.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count

from pyspark.sql import SparkSession
from tqdm import tqdm

POLL_SECONDS = 0.5
#: How long a phase that is over waits for the status tracker to count its last tasks (a failed job's never are).
SETTLE_SECONDS = 2.0
_GROUPS = count()


class Progress:
    """Shows, per phase, how many of its Spark tasks are done."""

    def __init__(self, spark: SparkSession, enabled: bool) -> None:
        self.spark = spark
        self.enabled = enabled

    def tasks(self, group: str) -> tuple[int, int]:
        """(done, total) tasks of the jobs Spark has started in ``group`` so far."""
        tracker = self.spark.sparkContext.statusTracker()
        done = total = 0
        for job in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info is not None else ():
                stage_info = tracker.getStageInfo(stage)
                if stage_info is not None:
                    done += stage_info.numCompletedTasks
                    total += stage_info.numTasks
        return done, total

    def _behind(self, group: str) -> bool:
        """Whether the tracker counts fewer tasks done than started in ``group``."""
        done, total = self.tasks(group)
        return done < total

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Run the body's Spark jobs in a job group of their own, with a bar on stderr if enabled."""
        group = f"flowspec-{name}-{next(_GROUPS)}"
        self.spark.sparkContext.setJobGroup(group, f"flowspec check: {name}")
        if not self.enabled:
            yield
            return
        bar = tqdm(desc=name, unit="task", file=sys.stderr, total=0)
        stop = threading.Event()

        def show() -> None:
            done, total = self.tasks(group)
            bar.total, bar.n = total, done
            bar.refresh()

        def poll() -> None:
            while not stop.wait(POLL_SECONDS):
                show()

        thread = threading.Thread(target=poll, name=f"progress-{name}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            # The tracker hears of finished tasks through Spark's listener bus, after the jobs
            # return: wait a little for it, or a phase that is over can end showing 0/3.
            deadline = time.monotonic() + SETTLE_SECONDS
            while time.monotonic() < deadline and self._behind(group):
                time.sleep(0.05)
            show()
            bar.close()
