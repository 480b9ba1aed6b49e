"""Drift auditor: live state + desired state -> normalize -> compare -> attribute -> classify -> report."""
