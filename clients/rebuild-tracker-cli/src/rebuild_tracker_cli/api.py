"""The HTTP layer: one `Api` over httpx that turns every way a call can fail into `ApiError`.

A pipeline reads the exit code, so what matters here is that nothing unexpected passes for an answer:
a 4xx or 5xx, a redirect (a login page in front of the API), a body that is not JSON, or JSON that is
not an object all become `ApiError` with a message a person can act on, never a half-read success.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from rebuild_tracker_cli import __version__

API_PREFIX = "/api/v1"
# One call waits at most this long; the tracker answers a freeze check in milliseconds.
HTTP_TIMEOUT_SECONDS = 30.0
USER_AGENT = f"rebuild-tracker-cli/{__version__}"
# An error line names this many problems of a refused batch, then counts the rest.
SHOWN_PROBLEMS = 5

Params = Mapping[str, str | Sequence[str]]


class ApiError(Exception):
    """Any failed call: the message says what went wrong (the API's own `detail` where it gave one)."""

    def __init__(self, message: str, *, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]
    headers: httpx.Headers


def idempotency_key_for(body: bytes, content_type: str) -> str:
    """The same file sent the same way always gets the same key, so a retried step is replayed.

    The media type is part of it because the server compares a repeat by media type and body: the
    same bytes sent as another format are another request, and must not collide with the first."""
    media_type = content_type.split(";")[0].strip().lower()
    return "sha256:" + hashlib.sha256(media_type.encode() + b"\0" + body).hexdigest()


def _problem(error: dict[str, Any]) -> str:
    where = " ".join(
        part
        for part in (
            f"row {error['index']}" if error.get("index") is not None else "",
            str(error["field"]) if error.get("field") else "",
        )
        if part
    )
    return f"{where}: {error.get('message')}" if where else str(error.get("message"))


def _error_message(response: httpx.Response) -> tuple[str, Any]:
    """The API's error shape is {"detail", "code", "errors": [{"field", "message"}]} (a batch's rows
    add "index"): say the detail, and which field of which row, the way the API named them."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        errors = [error for error in body.get("errors") or [] if isinstance(error, dict)]
        if not errors:
            return f"HTTP {response.status_code}: {body['detail']}", body
        shown = "; ".join(_problem(error) for error in errors[:SHOWN_PROBLEMS])
        if len(errors) > SHOWN_PROBLEMS:
            shown += f"; and {len(errors) - SHOWN_PROBLEMS} more"
        # The detail often is the first problem already said ("component: …"): say it once.
        said = {error.get("message") for error in errors} | {_problem(error) for error in errors}
        if body["detail"] not in said:
            shown = f"{body['detail']} ({shown})"
        return f"HTTP {response.status_code}: {shown}", body
    text = response.text.strip().splitlines()[0][:200] if response.text.strip() else response.reason_phrase
    return f"HTTP {response.status_code}: {text}", body


class Api:
    """The tracker's API at `url` (its base, e.g. https://tracker.example.com), with a token."""

    def __init__(self, url: str, token: str) -> None:
        if not url:
            raise ApiError("no tracker URL: pass --url or set REBUILD_TRACKER_URL")
        if not url.startswith(("http://", "https://")):
            raise ApiError(f"the tracker URL must start with http:// or https://, not {url!r}")
        if not token:
            raise ApiError("no API token: pass --token or set REBUILD_TRACKER_TOKEN")
        self.base = url.rstrip("/").removesuffix(API_PREFIX)
        self.client = httpx.Client(
            base_url=self.base + API_PREFIX,
            headers={
                "Authorization": f"Token {token}",
                "User-Agent": USER_AGENT,
                "Accept": "application/json",
            },
            timeout=HTTP_TIMEOUT_SECONDS,
            follow_redirects=False,
        )

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    def get(self, path: str, params: Params | None = None, *, timeout: float | None = None) -> Answer:
        """`timeout` shortens the request's (a wait's last poll must not outlast the wait)."""
        return self._call(
            "GET", path, params=params, timeout=min(timeout or HTTP_TIMEOUT_SECONDS, HTTP_TIMEOUT_SECONDS)
        )

    def post(self, path: str, *, content: bytes, content_type: str, idempotency_key: str) -> Answer:
        headers = {"Content-Type": content_type, "Idempotency-Key": idempotency_key}
        return self._call("POST", path, content=content, headers=headers)

    def _call(self, method: str, path: str, **kwargs: Any) -> Answer:
        try:
            response = self.client.request(method, path, **kwargs)
        except httpx.TimeoutException:
            seconds = kwargs.get("timeout", HTTP_TIMEOUT_SECONDS)
            raise ApiError(f"no answer from {self.base} within {seconds:.0f} s") from None
        except httpx.HTTPError as exc:
            raise ApiError(f"cannot reach {self.base}: {exc}") from None
        if response.is_redirect:
            where = response.headers.get("Location", "?")
            raise ApiError(
                f"HTTP {response.status_code}: redirected to {where}; is the URL the tracker's?",
                status=response.status_code,
            )
        if response.is_error:
            message, body = _error_message(response)
            raise ApiError(message, status=response.status_code, body=body)
        try:
            body = response.json()
        except ValueError:
            raise ApiError(
                f"HTTP {response.status_code}: the answer is not JSON; is the URL the tracker's?",
                status=response.status_code,
            ) from None
        if not isinstance(body, dict):
            raise ApiError(f"HTTP {response.status_code}: the answer is not a JSON object", body=body)
        return Answer(status=response.status_code, body=body, headers=response.headers)
