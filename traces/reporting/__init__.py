"""Reporting what a check found: the console, JSON and HTML outputs (``report``), answers per topic
(``outcomes``), and the generated tables of docs/trace-format.md (``docs``)."""
