"""One error type for rule violations; the API turns it into the single error shape."""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A business rule said no. `status` defaults to 409 (the request conflicts with the state)."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 409,
        field: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.errors = list(errors or [])
        if field is not None and not self.errors:
            self.errors = [{"field": field, "message": message}]
        self.extra = extra or {}
