"""The audit CronJob's resources, as the API server checks them: each limit is at least its request.

The quantities themselves are syntax (syntax.QUANTITY, checked as they are decoded); what is left
is the rule across two fields (pkg/apis/core/validation `ValidateResourceRequirements`: "must be
less than or equal to <name> limit"). A refused CronJob fails the cluster's whole Kustomization.
"""

from __future__ import annotations

from kubedata.quantity import QuantityError, parse_quantity

from renderer.model import to_data
from renderer.rules.checker import RuleChecker

__all__ = ["check_audit_resources"]


def check_audit_resources(c: RuleChecker) -> None:
    """A request above its limit is an error at the request."""
    audit = c.spec.audit
    if audit is None:
        return
    requests, limits = to_data(audit.resources.requests), to_data(audit.resources.limits)
    for name, request in requests.items():
        limit = limits.get(name)
        try:
            above = limit is not None and parse_quantity(request) > parse_quantity(limit)
        except QuantityError:
            continue  # already an error of its own, from decoding
        if above:
            c.add(
                ("spec", "audit", "resources", "requests", name),
                f'{name} request "{request}" is above its limit "{limit}" '
                f"(spec.audit.resources.limits.{name}); the API server refuses the CronJob and "
                "with it the cluster's whole Kustomization: lower the request or raise the limit",
            )
