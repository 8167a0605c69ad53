"""One error shape for every API error: {"detail": str, "code": str, "errors": [{"field", "message"}]}."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import ProtectedError, RestrictedError
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import ApplicationError
from core.unavailable import RETRY_AFTER_SECONDS, UNAVAILABLE_MESSAGE, is_unavailable

NON_FIELD = "non_field_errors"


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


def flatten_errors(detail: Any, prefix: str = "") -> list[dict[str, str | None]]:
    """Turn DRF's nested error dict/list into [{"field": "observations.3.value", "message": ...}]."""
    if isinstance(detail, dict):
        out: list[dict[str, str | None]] = []
        for key, value in detail.items():
            name = prefix if key in (NON_FIELD, "__all__") else (f"{prefix}.{key}" if prefix else str(key))
            out.extend(flatten_errors(value, name))
        return out
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return [{"field": prefix or None, "message": str(item)} for item in detail]
        out = []
        for index, item in enumerate(detail):
            if item:
                out.extend(flatten_errors(item, f"{prefix}.{index}" if prefix else str(index)))
        return out
    return [{"field": prefix or None, "message": str(detail)}]


def error_body(
    detail: str, code: str, errors: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    return {"detail": detail, "code": code, "errors": errors or [], **extra}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | JsonResponse | None:
    if isinstance(exc, ApplicationError):
        return Response(
            error_body(exc.message, _code_for(exc.status), exc.errors, **exc.extra), status=exc.status
        )
    if is_unavailable(exc):
        return api_unavailable(context.get("request"))
    if isinstance(exc, ProtectedError | RestrictedError):
        detail = "It is still referred to by other records, so it cannot be deleted."
        return Response(error_body(detail, "conflict"), status=409)
    if isinstance(exc, DjangoValidationError):
        errors = flatten_errors(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
        return Response(error_body(_first_message(errors), "invalid", errors), status=400)
    if isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge()
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        errors = flatten_errors(exc.detail)
        response.data = error_body(_first_message(errors), "invalid", errors)
    else:
        message = str(exc.detail) if isinstance(exc, exceptions.APIException) else str(exc)
        code = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
        response.data = error_body(message, code if isinstance(code, str) else "error")
    return response


def _first_message(errors: list[dict[str, Any]]) -> str:
    if not errors:
        return "Invalid input."
    first = errors[0]
    return f"{first['field']}: {first['message']}" if first.get("field") else first["message"]


def _code_for(status_code: int) -> str:
    return {
        400: "invalid",
        403: "permission_denied",
        404: "not_found",
        409: "conflict",
        413: "payload_too_large",
        422: "unprocessable",
    }.get(status_code, "error")


def api_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body("Not found.", "not_found"), status=404)


def api_unavailable(request: HttpRequest | None) -> JsonResponse:
    response = JsonResponse(error_body(UNAVAILABLE_MESSAGE, "unavailable"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def api_server_error(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_body("Server error.", "server_error"), status=500)
