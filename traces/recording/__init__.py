"""Recording traces: the recorder any implementation can call, the workloads that drive the reference
broker (``record``), and the bundled example traces in ``traces/examples/`` (``examples``)."""
