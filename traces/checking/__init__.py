"""Checking traces on Spark: where each trace's rows are (``layout``), the named rules and their scans
(``rules``, ``scan``), the replay through the spec (``replay``, ``segments``), and the pipeline that
runs them (``check``). ``session`` builds the Spark session; ``compiled`` builds the spec with mypyc
for the replay's workers and ``bench`` measures the checks: performance machinery of this room."""
