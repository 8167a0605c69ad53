"""CSV import of incidents: every row checked first (row errors {index, field, message}, as observation
ingest answers), then every row filed through incident_file in one transaction: all or nothing."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from core.csv_input import csv_records
from core.errors import ApplicationError
from incidents.inputs import IncidentInput
from incidents.models import Incident
from incidents.services.filing import incident_file, incident_writer_check
from incidents.services.times import time_order_problems

MAX_ROWS = 5000
MSG_INVALID = "{count} of {total} incidents are invalid; nothing was written."
MSG_EMPTY = "The CSV holds no incidents (a header row and at least one row)."
MSG_NOT_CSV = "The body is not UTF-8 CSV."
MSG_TOO_MANY = f"An import holds at most {MAX_ROWS} incidents."


def _rows(body: bytes) -> list[dict[str, Any]]:
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ApplicationError(MSG_NOT_CSV, status=400, field="body") from exc
    rows = []
    for row in csv_records(text, field="body"):
        cleaned = {key.strip(): (value or "").strip() for key, value in row.items() if key}
        for optional in ("workload", "mitigated_at", "resolved_at"):
            if cleaned.get(optional) == "":
                cleaned[optional] = None
        if cleaned.get("done_steps"):
            cleaned["done_steps"] = [part.strip() for part in cleaned["done_steps"].split(";")]
        else:
            cleaned.pop("done_steps", None)
        rows.append(cleaned)
    return rows


def _flatten(index: int, errors: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for field, messages in errors.items():
        message = messages[0] if isinstance(messages, list) else messages
        if isinstance(message, dict):  # a list field's per-item errors
            message = next(iter(message.values()))[0]
        out.append({"index": index, "field": field, "message": str(message)})
    return out


def incidents_import(*, actor: User, body: bytes) -> list[Incident]:
    """The actor (a framework engineer or program lead) files every row of a CSV, all or nothing."""
    incident_writer_check(actor=actor, action="import incidents")
    rows = _rows(body)
    if not rows:
        raise ApplicationError(MSG_EMPTY, status=400, field="body")
    if len(rows) > MAX_ROWS:
        raise ApplicationError(MSG_TOO_MANY, status=413, field="body")
    valid, errors = [], []
    for index, row in enumerate(rows):
        data = IncidentInput(data=row)
        if not data.is_valid():
            errors.extend(_flatten(index, data.errors))
            continue
        problems = time_order_problems({name: data.validated_data.get(name) for name in data.validated_data})
        errors.extend({"index": index, **problem} for problem in problems)
        valid.append(data.validated_data)
    if errors:
        count = len({error["index"] for error in errors})
        raise ApplicationError(MSG_INVALID.format(count=count, total=len(rows)), status=422, errors=errors)
    with transaction.atomic():
        return [incident_file(actor=actor, **values) for values in valid]
