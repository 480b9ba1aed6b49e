"""The fleet view: every cluster's nightly audit, read back from Prometheus (DESIGN §6 series).

prometheus.py reads the HTTP API (the only I/O), model.py turns query results into a Fleet
(pure), report.py and html.py print it; live.py gives the PR bot the live findings of a cluster.
"""
