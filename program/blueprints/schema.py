"""The strict check of a program template: every field known, every slot a criterion names declared.

Errors name where they are, e.g. "phases[1].exit_gate.criteria[0].metric_slot: 'thruput' is not a
metric slot of this template (throughput, step_time)", so a broken template fails at load and in
its test, never half-way through creating a program."""

from __future__ import annotations

import re
from typing import Any, NoReturn, cast

from metrics.models import ComparedStatistic
from program.models import Criterion, Phase

SLOT_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
KEY = re.compile(r"^[-a-zA-Z0-9_]{1,80}$")
MAX_MONTHS = 120

TOP_FIELDS = {"key", "name", "months", "slots", "phases", "approval_bar_weeks", "rounds_slot"}
OPTIONAL_TOP = {"slots", "approval_bar_weeks", "rounds_slot"}
MAX_BAR_WEEKS = 52
SLOT_FIELDS = {"suggested", "description"}
PHASE_FIELDS = {"kind", "name", "months", "exit_gate", "milestones"}
GATE_FIELDS = {"name", "criteria"}
MILESTONE_FIELDS = {"name", "month", "criteria"}
CRITERION_FIELDS = {
    "kind",
    "name",
    "metric_slot",
    "workload_slot",
    "statistic",
    "operator",
    "threshold",
    "window_days",
    "min_samples",
    "require_significant",
    "required",
}
MEASURED_ONLY = (
    "metric_slot",
    "workload_slot",
    "statistic",
    "threshold",
    "window_days",
    "require_significant",
)


class BlueprintError(ValueError):
    """A template file that does not follow the template format."""


def _fail(where: str, message: str) -> NoReturn:
    raise BlueprintError(f"{where}: {message}" if where else message)


def _mapping(value: Any, where: str, allowed: set[str], required: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(where, "must be a mapping")
    unknown = sorted(set(value) - allowed)
    if unknown:
        _fail(where, f"unknown field(s) {', '.join(map(str, unknown))}")
    missing = sorted(required - set(value))
    if missing:
        _fail(where, f"missing field(s) {', '.join(missing)}")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        _fail(where, "must be a non-empty text")
    return value


def _int(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        _fail(where, f"must be a whole number from {low} to {high}")
    return cast(int, value)  # checked above; mypy does not narrow Any through that condition


def _bool(value: Any, where: str) -> None:
    if not isinstance(value, bool):
        _fail(where, "must be true or false")


def _slots(value: Any) -> dict[str, set[str]]:
    """Slot names per kind; one namespace, since a program binds them all in one mapping."""
    value = _mapping(value if value is not None else {}, "slots", {"metrics", "workloads"}, set())
    names: dict[str, set[str]] = {"metrics": set(), "workloads": set()}
    for group in ("metrics", "workloads"):
        for name, spec in (value.get(group) or {}).items():
            where = f"slots.{group}.{name}"
            if not isinstance(name, str) or not SLOT_NAME.match(name):
                _fail(where, "a slot name is lower_snake_case, at most 40 characters")
            if name in names["metrics"] | names["workloads"]:
                _fail(where, "a slot name is used once across metric and workload slots")
            spec = _mapping(spec, where, SLOT_FIELDS, SLOT_FIELDS)
            if not isinstance(spec["suggested"], str) or not KEY.match(spec["suggested"]):
                _fail(f"{where}.suggested", "must be a registry key (letters, digits, - and _)")
            _text(spec["description"], f"{where}.description")
            names[group].add(name)
    return names


def _slot_ref(value: Any, where: str, declared: set[str], kind: str) -> None:
    if value not in declared:
        known = ", ".join(sorted(declared)) or "none declared"
        _fail(where, f"{value!r} is not a {kind} slot of this template ({known})")


def _criterion(spec: Any, where: str, slots: dict[str, set[str]]) -> None:
    spec = _mapping(spec, where, CRITERION_FIELDS, {"kind", "name"})
    _text(spec["name"], f"{where}.name")
    if spec["kind"] not in Criterion.Kind.values:
        _fail(f"{where}.kind", f"must be one of {', '.join(Criterion.Kind.values)}")
    if spec["kind"] == Criterion.Kind.MANUAL:
        for field in MEASURED_ONLY:
            if field in spec:
                _fail(f"{where}.{field}", "a manual criterion is attested, not measured")
    elif spec["kind"] == Criterion.Kind.EVERY_METRIC:
        for field in ("metric_slot", "statistic"):
            if field in spec:
                _fail(
                    f"{where}.{field}", "an every_metric criterion compares every metric by its own statistic"
                )
        threshold = spec.get("threshold")
        if not isinstance(threshold, int | float) or isinstance(threshold, bool) or threshold <= 0:
            _fail(f"{where}.threshold", "an every_metric criterion needs a relative performance above 0")
        if spec.get("operator", "gte") not in (Criterion.Operator.GTE, Criterion.Operator.GT):
            _fail(f"{where}.operator", "an every_metric criterion asks for at least as good: gte or gt")
        if "workload_slot" in spec:
            _slot_ref(spec["workload_slot"], f"{where}.workload_slot", slots["workloads"], "workload")
    else:
        if "metric_slot" not in spec:
            _fail(where, "a measured criterion needs a metric_slot")
        if not isinstance(spec.get("threshold"), int | float) or isinstance(spec.get("threshold"), bool):
            _fail(f"{where}.threshold", "a measured criterion needs a number")
        _slot_ref(spec["metric_slot"], f"{where}.metric_slot", slots["metrics"], "metric")
        if "workload_slot" in spec:
            _slot_ref(spec["workload_slot"], f"{where}.workload_slot", slots["workloads"], "workload")
    if "operator" in spec and spec["operator"] not in Criterion.Operator.values:
        _fail(f"{where}.operator", f"must be one of {', '.join(Criterion.Operator.values)}")
    statistic_choices = ComparedStatistic.values
    if "statistic" in spec and spec["statistic"] not in statistic_choices:
        _fail(f"{where}.statistic", f"must be one of {', '.join(statistic_choices)}")
    if "min_samples" in spec:
        _int(spec["min_samples"], f"{where}.min_samples", 2, 1_000_000)
    if "window_days" in spec:
        _int(spec["window_days"], f"{where}.window_days", 1, 3650)
    for field in ("require_significant", "required"):
        if field in spec:
            _bool(spec[field], f"{where}.{field}")


def _criteria(value: Any, where: str, slots: dict[str, set[str]]) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        _fail(where, "must be a list")
    for index, spec in enumerate(value):
        _criterion(spec, f"{where}[{index}]", slots)


def _phase(spec: Any, where: str, months: int, slots: dict[str, set[str]]) -> None:
    spec = _mapping(spec, where, PHASE_FIELDS, {"kind", "name", "months", "exit_gate"})
    if spec["kind"] not in Phase.Kind.values:
        _fail(f"{where}.kind", f"must be one of {', '.join(Phase.Kind.values)}")
    _text(spec["name"], f"{where}.name")
    span = spec["months"]
    if not isinstance(span, list) or len(span) != 2:
        _fail(f"{where}.months", "must be [first, last]")
    first = _int(span[0], f"{where}.months[0]", 1, months)
    _int(span[1], f"{where}.months[1]", first, months)
    gate = _mapping(spec["exit_gate"], f"{where}.exit_gate", GATE_FIELDS, {"name"})
    _text(gate["name"], f"{where}.exit_gate.name")
    _criteria(gate.get("criteria"), f"{where}.exit_gate.criteria", slots)
    milestones = spec.get("milestones") or []
    if not isinstance(milestones, list):
        _fail(f"{where}.milestones", "must be a list")
    for index, milestone in enumerate(milestones):
        at = f"{where}.milestones[{index}]"
        milestone = _mapping(milestone, at, MILESTONE_FIELDS, {"name", "month"})
        _text(milestone["name"], f"{at}.name")
        _int(milestone["month"], f"{at}.month", 1, months)
        _criteria(milestone.get("criteria"), f"{at}.criteria", slots)


def blueprint_check(data: Any, *, key: str) -> dict[str, Any]:
    """`data` if it is a well-formed template named `key`; BlueprintError naming the first problem."""
    try:
        data = _mapping(data, "", TOP_FIELDS, TOP_FIELDS - OPTIONAL_TOP)
        if data["key"] != key:
            _fail("key", f"is {data['key']!r} but the file is {key}.yaml")
        _text(data["name"], "name")
        months = _int(data["months"], "months", 1, MAX_MONTHS)
        slots = _slots(data.get("slots"))
        if data.get("approval_bar_weeks") is not None:
            _int(data["approval_bar_weeks"], "approval_bar_weeks", 1, MAX_BAR_WEEKS)
        if data.get("rounds_slot") is not None:
            # The metric slot whose runs (run_ids) count as a program's experiment rounds
            # (incidents.services.derived: program-rounds-per-day).
            _slot_ref(data["rounds_slot"], "rounds_slot", slots["metrics"], "metric")
        if not isinstance(data["phases"], list) or not data["phases"]:
            _fail("phases", "must be a non-empty list")
        for index, phase in enumerate(data["phases"]):
            _phase(phase, f"phases[{index}]", months, slots)
    except BlueprintError as exc:
        raise BlueprintError(f"Template {key}: {exc}") from None
    return cast("dict[str, Any]", data)  # _mapping's dict; the parameter it was assigned to is typed Any
