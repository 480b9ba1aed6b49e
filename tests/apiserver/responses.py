"""Response bodies written the way kube-apiserver writes them.

Status: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message",
"reason","details","code"}` with `details` left out when there are none (401) and empty details
`{}` for an unknown path (k8s.io/apimachinery/pkg/api/errors). Lists: `kind: <Kind>List`,
`metadata.resourceVersion`, `continue` and `remainingItemCount` only when there is more, items of
built-in types without apiVersion and kind. Tables (`Accept: ...;as=Table`) with Name and Age.
"""

from __future__ import annotations

import json
import time
from calendar import timegm
from typing import Any

from tests.apiserver.resources import Resource
from tests.apiserver.store import Page, Stored

__all__ = [
    "EXPIRED_MESSAGE",
    "REASONS",
    "forbidden",
    "list_body",
    "not_found",
    "status_body",
    "table_body",
]

REASONS = {
    400: ("BadRequest", "the server rejected our request for an unknown reason"),
    401: ("Unauthorized", "Unauthorized"),
    403: ("Forbidden", "forbidden"),
    404: ("NotFound", "the server could not find the requested resource"),
    405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
    409: (
        "Conflict",
        "the object has been modified; please apply your changes to the latest version",
    ),
    410: ("Expired", "too old resource version"),
    429: ("TooManyRequests", "Too many requests, please try again later."),
    500: ("InternalError", "Internal error occurred: injected fault"),
    502: ("BadGateway", "Bad Gateway"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: ("Timeout", "Timeout: request did not complete within requested timeout"),
}
EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can start "
    "a new list without the continue parameter, or use the continue token in this response to "
    "retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)


def status_body(
    code: int,
    message: str | None = None,
    reason: str | None = None,
    details: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> bytes:
    default_reason, default_message = REASONS.get(code, ("Unknown", "unknown error"))
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": meta or {},
        "status": "Failure",
        "message": default_message if message is None else message,
        "reason": reason or default_reason,
    }
    if details is not None:
        body["details"] = details
    body["code"] = code
    return json.dumps(body, separators=(",", ":")).encode()


def _details(resource: Resource, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name} if name else {}
    if resource.group:
        details["group"] = resource.group
    details["kind"] = resource.plural
    return details


def not_found(resource: Resource, name: str) -> bytes:
    return status_body(
        404, f'{resource.qualified} "{name}" not found', details=_details(resource, name)
    )


def forbidden(resource: Resource, user: str, verb: str, namespace: str, name: str) -> bytes:
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    subject = f'{resource.qualified} "{name}"' if name else resource.qualified
    message = (
        f'{subject} is forbidden: User "{user}" cannot {verb} resource "{resource.plural}" '
        f'in API group "{resource.group}" {scope}'
    )
    return status_body(403, message, details=_details(resource, name))


def _list_meta(page: Page) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(page.resource_version)}
    if page.continue_token:
        meta["continue"] = page.continue_token
    if page.remaining is not None:
        meta["remainingItemCount"] = page.remaining
    return meta


def list_body(resource: Resource, version: str, page: Page) -> bytes:
    head = {
        "kind": f"{resource.kind}List",
        "apiVersion": resource.api_version(version),
        "metadata": _list_meta(page),
    }
    items = b",".join(s.encode(version, bare=resource.builtin) for s in page.items)
    return json.dumps(head, separators=(",", ":")).encode()[:-1] + b',"items":[' + items + b"]}"


def _age(created: str, now: float) -> str:
    try:
        seconds = int(now - timegm(time.strptime(created, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return "<unknown>"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def table_body(items: list[Stored], page: Page | None, now: float) -> bytes:
    columns = [
        {
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": "Name of the object",
            "priority": 0,
        },
        {
            "name": "Age",
            "type": "string",
            "format": "",
            "description": "CreationTimestamp",
            "priority": 0,
        },
    ]
    rows = [
        {
            "cells": [
                s.obj["metadata"]["name"],
                _age(s.obj["metadata"].get("creationTimestamp", ""), now),
            ],
            "object": {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": {k: v for k, v in s.obj["metadata"].items() if k != "managedFields"},
            },
        }
        for s in items
    ]
    meta = _list_meta(page) if page else {}
    body = {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": columns,
        "rows": rows,
    }
    return json.dumps(body, separators=(",", ":")).encode()
