"""Idempotency-Key: a repeated create or decision answers what the first one answered.

Per user and operation (HTTP method and URL name), the first 2xx answer to a key is stored in the
same transaction as the write it reports, and replayed — status and body, marked
`Idempotent-Replay: true` — for every repeat. Requests are compared by meaning: the parsed body,
re-serialized with sorted keys, plus the path arguments; so whitespace, key order and a
`; charset=utf-8` do not make a repeat different, but another body or another object does (422).
Concurrent repeats queue on a transaction-scoped advisory lock on (user, operation, key): one runs,
the others wait for its commit and replay it. Error answers are not stored, so a corrected retry
may reuse the key. Stored answers are kept IDEMPOTENCY_RETENTION_HOURS, then purged by a beat task.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar, cast

import orjson
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import connection, transaction
from django.http import QueryDict
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder

from core.errors import ApplicationError
from core.models import IdempotencyRecord
from core.roles import acting_user

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.urls import ResolverMatch
    from rest_framework.request import Request
    from rest_framework.views import APIView

_Handler = TypeVar("_Handler", bound="Callable[..., Response]")

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = IdempotencyRecord.KEY_MAX_LENGTH
REPLAY_HEADER = "Idempotent-Replay"

MSG_KEY_TOO_LONG = f"Idempotency-Key is at most {MAX_KEY_LENGTH} characters."
MSG_KEY_REUSED = "This Idempotency-Key was used for a different request; use a new key."
MSG_TOO_DEEP = "The body is nested too deeply to compare with an earlier request."

IDEMPOTENCY_KEY = OpenApiParameter(
    HEADER,
    str,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        f"Any unique string (at most {MAX_KEY_LENGTH} characters). A repeat of the same request with "
        "the same key replays the first successful answer instead of acting again; the same key "
        "with a different request is a 422."
    ),
)


def idempotency_key(request: Request) -> str | None:
    """The request's key, None without one; a key too long to store is a 400 naming the header."""
    key = request.headers.get(HEADER) or None
    if key is not None and len(key) > MAX_KEY_LENGTH:
        raise ApplicationError(MSG_KEY_TOO_LONG, status=400, field=HEADER)
    return key


def fingerprint(data: Any) -> str:
    """SHA-256 of the canonical JSON of parsed request data: sorted keys, no whitespace."""
    try:
        text = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        # orjson refuses integers beyond 64 bits and lone surrogates, which a JSON body may hold.
        try:
            text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str).encode()
        except RecursionError:
            raise ApplicationError(MSG_TOO_DEEP, status=400, field="body") from None
    return hashlib.sha256(text).hexdigest()


def body_fingerprint(body: bytes, content_type: str) -> str:
    """For views that read the raw body: JSON and NDJSON by meaning, other types by their bytes.

    The media type counts, its parameters (charset) do not."""
    media_type = content_type.split(";")[0].strip().lower()
    try:
        if media_type in ("", "application/json"):
            return fingerprint([media_type, orjson.loads(body)])
        if media_type in ("application/x-ndjson", "application/ndjson", "application/jsonl"):
            return fingerprint(
                [media_type, [orjson.loads(line) for line in body.splitlines() if line.strip()]]
            )
    except orjson.JSONDecodeError:
        pass  # not comparable by meaning; the bytes still are (and decoding will say what is wrong)
    return hashlib.sha256(media_type.encode() + b"\0" + body).hexdigest()


def _comparable(data: Any) -> Any:
    """request.data as plain JSON values: form fields as lists, uploaded files by their content."""
    if isinstance(data, QueryDict):
        return {name: [_comparable(value) for value in data.getlist(name)] for name in data}
    if isinstance(data, UploadedFile):
        digest = hashlib.sha256()
        for chunk in data.chunks():
            digest.update(chunk)
        data.seek(0)
        return {"file": data.name, "sha256": digest.hexdigest()}
    return data


def claim(*, user: User, scope: str, key: str) -> None:
    """Wait until no other transaction holds this (user, scope, key); held until this one ends."""
    assert connection.in_atomic_block, "claim() only makes sense inside the write's transaction"
    digest = hashlib.sha256(f"{user.pk}\0{scope}\0{key}".encode()).digest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest[:8], "big", signed=True)])


def recorded(*, user: User, scope: str, key: str, request_hash: str) -> IdempotencyRecord | None:
    """The stored first answer for this key, None if there is none; 422 if it answered another request."""
    record = IdempotencyRecord.objects.filter(user=user, scope=scope, key=key).first()
    if record is not None and record.request_hash != request_hash:
        raise ApplicationError(MSG_KEY_REUSED, status=422, field=HEADER)
    return record


def remember(*, user: User, scope: str, key: str, request_hash: str, status_code: int, body: Any) -> None:
    IdempotencyRecord.objects.create(
        user=user,
        scope=scope,
        key=key,
        request_hash=request_hash,
        response_status=status_code,
        response_body=body,
    )


def replay(record: IdempotencyRecord) -> Response:
    body = None if record.response_status == status.HTTP_204_NO_CONTENT else record.response_body
    return Response(body, status=record.response_status, headers={REPLAY_HEADER: "true"})


def idempotent(handler: _Handler) -> _Handler:
    """Honour Idempotency-Key on a DRF handler method (`post`, `create`).

    Runs after authentication and permissions, so neither the anonymous nor a caller who may not
    act can read a stored answer. The handler runs inside the transaction that holds the lock and
    stores the answer; its refusals (4xx) are rendered there too, so what a service commits before
    refusing stays committed, as it does without a key.
    """

    @functools.wraps(handler)
    def wrapper(view: APIView, request: Request, *args: Any, **kwargs: Any) -> Response:
        key = idempotency_key(request)
        if key is None:
            return handler(view, request, *args, **kwargs)
        # A request routed to a DRF handler always has its resolver match.
        scope = f"{request.method} {cast('ResolverMatch', request.resolver_match).view_name}"
        request_hash = fingerprint({"path": kwargs, "body": _comparable(request.data)})
        with transaction.atomic():
            # After authentication and permissions: the caller is signed in, a User.
            claim(user=acting_user(request), scope=scope, key=key)
            record = recorded(user=acting_user(request), scope=scope, key=key, request_hash=request_hash)
            if record is not None:
                return replay(record)
            try:
                response = handler(view, request, *args, **kwargs)
            except Exception as exc:  # rendered as DRF would; what it cannot render re-raises
                response = view.handle_exception(exc)
            if status.is_success(response.status_code):
                # A 204 has no body; the column holds JSON, so it keeps {} (replay sends none).
                body = (
                    json.loads(json.dumps(response.data, cls=JSONEncoder))
                    if response.data is not None
                    else {}
                )
                remember(
                    user=acting_user(request),
                    scope=scope,
                    key=key,
                    request_hash=request_hash,
                    status_code=response.status_code,
                    body=body,
                )
        return response

    # The wrapper takes what the handler takes and answers a Response, as the handler does.
    return cast(_Handler, wrapper)


def idempotency_records_purge(*, now: datetime | None = None) -> int:
    """Forget answers older than the retention; returns how many were deleted."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.IDEMPOTENCY_RETENTION_HOURS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
