"""Drift auditor: live + desired -> normalize -> compare -> attribute -> classify -> report."""
