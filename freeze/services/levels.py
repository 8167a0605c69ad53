"""Components, freeze windows and the levels of the freeze list (program leads)."""

from __future__ import annotations

import csv
import io
from datetime import datetime, time, timedelta
from typing import Any

import yaml
from django.contrib.auth.models import User
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from core.api.parsers import surrogate_problem
from core.audit import transition_record
from core.csv_input import csv_records
from core.errors import ApplicationError
from freeze import policies, recurrence
from freeze.models import Component, FreezeEntry, FreezeWindow, Level
from program import policies as program_policies
from program.models import Phase, Program
from program.services.plan_shift import PlanMove


@transaction.atomic
def component_upsert(
    *, actor: User, key: str, name: str, layer: str, owner_team: str, description: str = ""
) -> Component:
    policies.require_manage_components(actor)
    component, _ = Component.objects.update_or_create(
        key=key, defaults={"name": name, "layer": layer, "owner_team": owner_team, "description": description}
    )
    return component


@transaction.atomic
def window_create(
    *,
    actor: User,
    program: Program,
    name: str,
    starts_at: datetime,
    ends_at: datetime,
    default_level: str = Level.APPROVAL,
    rrule: str = "",
    timezone: str = "UTC",
    occurrence_duration: timedelta | None = None,
) -> FreezeWindow:
    """A window over starts_at..ends_at; with an `rrule`, recurring inside that span (freeze.recurrence).

    A naive starts_at or ends_at is wall-clock time in `timezone` (recurrence.wall_clock)."""
    program_policies.require_lead(actor, program, "create freeze windows")
    recurrence.zone(timezone)
    starts_at = recurrence.wall_clock(starts_at, timezone, "starts_at")
    ends_at = recurrence.wall_clock(ends_at, timezone, "ends_at")
    if ends_at <= starts_at:
        raise ApplicationError("ends_at must be after starts_at.", status=400, field="ends_at")
    rrule = rrule.strip()
    recurrence.validate(
        rrule_text=rrule, timezone_name=timezone, occurrence_duration=occurrence_duration, starts_at=starts_at
    )
    window = FreezeWindow.objects.create(
        program=program,
        name=name,
        starts_at=starts_at,
        ends_at=ends_at,
        default_level=default_level,
        rrule=rrule,
        timezone=timezone,
        occurrence_duration=occurrence_duration,
    )
    data = {"rrule": rrule, "timezone": timezone} if rrule else None
    transition_record(subject=window, action="created", actor=actor, to_state=default_level, data=data)
    return window


def _phase_span(phase: Phase) -> tuple[datetime, datetime]:
    """The days a phase covers: its planned dates until it starts; from its actual start, for its
    planned length, once it has started (a sprint that begins seven weeks early is frozen from that
    day and ends seven weeks early too, not a year-long freeze up to the old planned end); up to its
    actual end once completed."""
    first = phase.actual_start or phase.planned_start
    last = phase.actual_end or first + (phase.planned_end - phase.planned_start)
    start = timezone.make_aware(datetime.combine(first, time.min))
    end = timezone.make_aware(datetime.combine(last + timedelta(days=1), time.min))
    return start, end


@transaction.atomic
def window_for_frontier(*, program_id: int) -> FreezeWindow | None:
    """The frontier sprint's default window: the framework is frozen, changes need approval."""
    phase = Phase.objects.filter(program_id=program_id, kind=Phase.Kind.FRONTIER).first()
    if phase is None or FreezeWindow.objects.filter(phase=phase).exists():
        return None
    starts_at, ends_at = _phase_span(phase)
    window = FreezeWindow.objects.create(
        program_id=program_id,
        phase=phase,
        name=f"{phase.name} freeze",
        starts_at=starts_at,
        ends_at=ends_at,
        default_level=Level.APPROVAL,
    )
    transition_record(
        subject=window,
        action="created",
        to_state=window.default_level,
        reason="default window of the frontier sprint",
    )
    return window


def windows_follow_preview(*, phases: list[Phase]) -> list[PlanMove]:
    """How the windows on these phases would move if the phases had these (unsaved) dates: the
    advance page's preview of a plan shift. The window's start and end days, from → to."""
    by_pk = {phase.pk: phase for phase in phases}
    moves = []
    for window in FreezeWindow.objects.filter(phase_id__in=by_pk).order_by("starts_at", "id"):
        assert window.phase_id is not None
        starts_at, ends_at = _phase_span(by_pk[window.phase_id])
        # Days as a person reads them: the first and the last day frozen (ends_at is exclusive).
        last_second = timedelta(seconds=1)
        for field, before, after in (
            ("first_day", window.starts_at, starts_at),
            ("last_day", window.ends_at - last_second, ends_at - last_second),
        ):
            if before != after:
                moves.append(
                    PlanMove("freeze window", window.pk, window.name, field, before.date(), after.date())
                )
    return moves


@transaction.atomic
def windows_follow_phase(*, phase_id: int, cause: str = "re-planned") -> int:
    """Windows attached to a phase move with its dates (re-planned, started, completed, backfilled).

    Returns how many moved; a window already on the phase's dates is left alone and not audited."""
    phase = Phase.objects.get(pk=phase_id)
    starts_at, ends_at = _phase_span(phase)
    moved = 0
    for window in FreezeWindow.objects.select_for_update().filter(phase=phase):
        if (window.starts_at, window.ends_at) == (starts_at, ends_at):
            continue
        before = {"starts_at": window.starts_at.isoformat(), "ends_at": window.ends_at.isoformat()}
        was = f"{window.starts_at:%Y-%m-%d} – {window.ends_at:%Y-%m-%d}"
        window.starts_at, window.ends_at = starts_at, ends_at
        window.save(update_fields=["starts_at", "ends_at"])
        transition_record(
            subject=window,
            action="moved",
            reason=f"phase {cause} (was {was})",
            data={
                "cause": cause,
                "before": before,
                "after": {"starts_at": starts_at.isoformat(), "ends_at": ends_at.isoformat()},
            },
        )
        moved += 1
    return moved


@transaction.atomic
def freeze_levels_set(*, actor: User, window: FreezeWindow, levels: dict[str, str], reason: str = "") -> int:
    """Set levels by component key; returns how many really changed.

    Only a row whose level in force differs is written: a level equal to the window's default removes
    the explicit entry (the component follows the default again), any other level creates or updates
    it. Every change keeps its history: pghistory on the entry and one `level` transition each."""
    policies.require_window_lead(actor, window, "set freeze levels")
    # A key PostgreSQL cannot hold (NUL, lone surrogate) names no component: never sent to the query.
    storable = [key for key in levels if "\x00" not in key and not surrogate_problem(key)]
    components = {c.key: c for c in Component.objects.filter(key__in=storable)}
    errors = [
        {"field": f"levels.{key}", "message": f"unknown component '{key}'."}
        for key in levels
        if key not in components
    ]
    errors += [
        {"field": f"levels.{key}", "message": f"'{level}' is not one of open, approval, frozen."}
        for key, level in levels.items()
        if level not in Level.values
    ]
    if errors:
        raise ApplicationError(f"{len(errors)} level(s) refused; nothing changed.", status=400, errors=errors)
    current = {e.component_id: e for e in FreezeEntry.objects.select_for_update().filter(window=window)}
    changed = 0
    for key, level in levels.items():
        component = components[key]
        entry = current.get(component.pk)
        before = entry.level if entry else window.default_level
        if before == level:
            continue  # unchanged: no write, no history (an explicit entry equal to it stays as it is)
        if level == window.default_level:
            assert entry is not None  # without one the level in force is already the default
            entry.delete()
        elif entry is None:
            FreezeEntry.objects.create(window=window, component=component, level=level)
        else:
            entry.level = level
            entry.save(update_fields=["level"])
        transition_record(
            subject=window,
            action="level",
            actor=actor,
            from_state=before,
            to_state=level,
            reason=reason,
            data={"component": key, "explicit": level != window.default_level},
        )
        changed += 1
    return changed


LEVEL_COLUMNS = ("component", "layer", "owner_team", "level")


def freeze_levels_export(*, window: FreezeWindow, fmt: str) -> str:
    entries = dict(FreezeEntry.objects.filter(window=window).values_list("component_id", "level"))
    rows = [
        {
            "component": c.key,
            "layer": c.layer,
            "owner_team": c.owner_team,
            "level": entries.get(c.pk, window.default_level),
        }
        for c in Component.objects.all()
    ]
    if fmt == "yaml":
        return yaml.safe_dump({"window": window.name, "levels": rows}, sort_keys=False)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=LEVEL_COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


MAX_IMPORT_BYTES = 1024 * 1024  # an export of every component is a few kB


def _decode_upload(file: File[bytes] | bytes | None) -> tuple[str, str]:
    """The text and format (csv or yaml, by the file's name) of an uploaded file or raw bytes."""
    if file is None:
        raise ApplicationError("Choose a CSV or YAML file to import.", status=400, field="file")
    name = str(getattr(file, "name", "") or "")
    fmt = "yaml" if name.lower().endswith((".yaml", ".yml")) else "csv"
    raw = file if isinstance(file, bytes) else file.read(MAX_IMPORT_BYTES + 1)
    if not isinstance(raw, bytes):
        raise ApplicationError("Upload the CSV or YAML as a file.", status=400, field="file")
    if len(raw) > MAX_IMPORT_BYTES:
        raise ApplicationError("The file is larger than 1 MB.", status=400, field="file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ApplicationError(
            f"The file is not UTF-8 text (byte {exc.start} cannot be read); save it as UTF-8 and retry.",
            status=400,
            field="file",
        ) from exc
    if "\x00" in text:
        raise ApplicationError("The file is binary, not a CSV or YAML export.", status=400, field="file")
    return text, fmt


def _rows(text: str, fmt: str) -> list[Any] | None:
    """The rows of the file; None when a YAML document is not a mapping (the caller names `file`)."""
    try:
        if fmt == "yaml":
            document = yaml.safe_load(text) or {}
            if not isinstance(document, dict):
                return None
            rows = document.get("levels", [])
            return rows if isinstance(rows, list) else None
        return csv_records(text, field="file")
    except yaml.YAMLError as exc:
        raise ApplicationError(
            f"The file is not valid {fmt.upper()}: {exc}", status=400, field="file"
        ) from exc
    except RecursionError as exc:  # PyYAML's composer recurses once per nesting level
        raise ApplicationError("The file is nested too deeply to be read.", status=400, field="file") from exc


def freeze_levels_import(
    *, actor: User, window: FreezeWindow, file: File[bytes] | bytes | None, reason: str = ""
) -> int:
    """Levels from an uploaded CSV (component,level columns) or YAML ({levels: [{component, level}]})
    export: `file` is the upload (its name ending .yaml/.yml means YAML) or raw bytes (CSV). Decoding
    and format problems are 400s naming `file`; then only the rows that change are written."""
    policies.require_window_lead(actor, window, "set freeze levels")  # before reading a byte of it
    text, fmt = _decode_upload(file)
    rows = _rows(text, fmt)
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and "component" in r and "level" in r for r in rows
    ):
        raise ApplicationError(
            "Each row needs 'component' and 'level' (CSV columns, or YAML under 'levels').",
            status=400,
            field="file",
        )
    if not rows:
        raise ApplicationError("The file lists no levels.", status=400, field="file")
    levels = {str(r["component"]): str(r["level"]) for r in rows}
    for value in (*levels, *levels.values()):  # YAML's "\ud800" escape makes text PostgreSQL cannot hold
        problem = surrogate_problem(value)
        if problem:
            raise ApplicationError(f"The file {problem}", status=400, field="file")
    return freeze_levels_set(
        actor=actor,
        window=window,
        levels=levels,
        reason=reason or f"imported from {fmt.upper()}",
    )
