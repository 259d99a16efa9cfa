"""The trace format: the records of a trace (``records``), reading and validating them (``read``) and
writing them (``write``), JSON Lines or Parquet. docs/trace-format.md describes it for people and
``trace-event.schema.json`` for machines."""
