"""The fleet view: every cluster's nightly audit, read back from Prometheus (DESIGN §6 series).

prometheus.py reads the HTTP API (the only I/O), model.py turns query results into a Fleet
(pure), report.py and html.py print it (words.py: how both say times and states).
"""
