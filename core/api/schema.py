"""The OpenAPI schema tells the truth about failures: every operation declares the error answers it can give,
each with the one error shape (core/api/errors.py), and every operation has a summary. The one answer not in
that shape is 414, which the web server gives before the app sees the request (URI_TOO_LONG_DESCRIPTION).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from drf_spectacular import openapi
from rest_framework import serializers
from rest_framework.permissions import AllowAny

if TYPE_CHECKING:
    from drf_spectacular.plumbing import ComponentRegistry

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

# Why each error answer can happen; the description of that response in the schema.
ERROR_DESCRIPTIONS = {
    400: "The input is invalid; `errors` names each bad field.",
    401: "No valid credentials were sent.",
    403: "The caller may not do this.",
    404: "No such object (in the path or named in the query), or no such page of results.",
    409: "The object's state does not allow this, or it is still referred to.",
    413: "The request body is too large.",
    415: "The request body's content type is not accepted.",
    422: "The Idempotency-Key was used for a different body, or rows were refused (each listed in `errors`).",
    429: "Too many requests from this client address, or too many failed sign-ins: retry later.",
    503: "The database or the broker is unavailable: retry later.",
}

# gunicorn, as deployed (docker/Dockerfile) and as `make schemathesis` runs it, refuses a request line longer
# than its limit_request_line (4,094 bytes by default) with its own HTML page: Django never sees the request.
# Only query parameters let a client make the line that long (repeated values, free-text filters); the path
# names existing objects, whose keys their models keep short. Declared as text/html because that is what arrives.
URI_TOO_LONG_DESCRIPTION = (
    "The request line (path and query string) is longer than the web server accepts (4,094 bytes): the web "
    "server answers before the API does, with an HTML page rather than the error shape. Send fewer or shorter "
    "query parameters."
)

# Verbs for an operation on one object, by HTTP method.
ITEM_VERBS = {"GET": "Show", "PUT": "Replace", "PATCH": "Update", "DELETE": "Delete"}
# Last path segments that name a thing rather than an action: what POSTing to them does.
NOUN_ACTIONS = {
    "decision": "Record a decision on",
    "state": "Set the state of",
    "levels": "Set the levels of",
    "import": "Import the levels of",
    "batch": "Ingest a batch of",
}
IRREGULAR_SINGULARS = {"criteria": "criterion", "levels": "levels"}


class ErrorItemOutput(serializers.Serializer[dict[str, Any]]):
    field = serializers.CharField(allow_null=True, help_text="Dotted path of the bad input, or null.")
    message = serializers.CharField()


class ErrorOutput(serializers.Serializer[dict[str, Any]]):
    """Every API error: a sentence, a stable code, and one entry per problem found."""

    detail = serializers.CharField()
    code = serializers.CharField()
    # A field named like Serializer.errors: DRF's metaclass moves declared fields into _declared_fields,
    # so the class keeps its `errors` property; the stub cannot know that.
    errors = ErrorItemOutput(many=True)  # type: ignore[assignment]


class AutoSchema(openapi.AutoSchema):
    def get_operation(
        self, path: str, path_regex: str, path_prefix: str, method: str, registry: ComponentRegistry
    ) -> dict[str, Any] | None:
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        operation.setdefault("summary", self._fallback_summary(operation))
        responses = operation["responses"]
        for status_code in self._error_status_codes(operation):
            # An answer declared by the view itself (say a documented 409) is kept as it is.
            responses.setdefault(
                str(status_code),
                {
                    # drf-spectacular leaves this method unannotated.
                    **self._get_response_for_code(  # type: ignore[no-untyped-call]
                        ErrorOutput, str(status_code), ["application/json"]
                    ),
                    "description": ERROR_DESCRIPTIONS[status_code],
                },
            )
        if any(p.get("in") == "query" for p in operation.get("parameters", [])):
            responses.setdefault(
                "414",
                {
                    "description": URI_TOO_LONG_DESCRIPTION,
                    "content": {"text/html": {"schema": {"type": "string"}}},
                },
            )
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def _error_status_codes(self, operation: dict[str, Any]) -> list[int]:
        codes = [400, 503]
        if not self._is_public():
            codes += [401, 403]
        # A path parameter, a query parameter (a filter, a page number) or a name in the query can all miss.
        if "{" in self.path or any(p.get("in") == "query" for p in operation.get("parameters", [])):
            codes.append(404)
        if self.method in WRITE_METHODS:
            codes.append(409)
        if "requestBody" in operation:
            codes += [413, 415]
        headers = {p["name"].lower() for p in operation.get("parameters", []) if p.get("in") == "header"}
        if "idempotency-key" in headers:
            codes.append(422)
        if self.view.get_throttles():
            codes.append(429)
        return codes

    def _is_public(self) -> bool:
        permissions = self.view.get_permissions()
        return bool(permissions) and all(isinstance(p, AllowAny) for p in permissions)

    def _fallback_summary(self, operation: dict[str, Any]) -> str:
        """Plain words from the method and path: "List programs", "Show a gate", "Approve a freeze exception"."""
        segments = re.sub(r"^/api/v\d+/", "", self.path).strip("/").split("/")
        params = [i for i, s in enumerate(segments) if s.startswith("{")]
        words = [s.replace("-", " ") for s in segments]
        if params and params[-1] == len(segments) - 1:
            thing = _singular([w for w in words if not w.startswith("{")])
            return f"{ITEM_VERBS.get(self.method, self.method.capitalize())} {_a(thing)}"
        last = words[-1]
        if not params:
            nouns = " ".join(words)
            if self.method == "GET":
                return f"List {nouns}" if self._is_list_view() else self._first_sentence() or f"Show {nouns}"
            if last in NOUN_ACTIONS:
                return f"{NOUN_ACTIONS[last]} {' '.join(words[:-1])}"
            return f"Create {_a(_singular([nouns]))}"
        owner = _a(_singular([w for w in words[: params[-1]] if not w.startswith("{")]))
        if self.method == "GET":
            return f"List the {last} of {owner}"
        if "201" in operation["responses"]:
            return f"Add {_a(_singular([last]))} to {owner}"
        return f"{NOUN_ACTIONS.get(last, last.capitalize())} {owner}"

    def _first_sentence(self) -> str:
        description = self.get_description().strip()
        return re.split(r"[.:?!]\s|\n", description, maxsplit=1)[0].rstrip(".") if description else ""


def _singular(nouns: list[str]) -> str:
    """ "freeze exceptions" → "freeze exception"; "definitions/versions" → "definition version"."""
    words = []
    for noun in nouns:
        *head, tail = noun.split(" ")
        tail = IRREGULAR_SINGULARS.get(tail, tail[:-1] if tail.endswith("s") else tail)
        words.append(" ".join([*head, tail]))
    return " ".join(words)


def _a(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"
