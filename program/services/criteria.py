"""A gate's criteria: add, edit, delete, attest, and re-pin them to their metrics' active versions.

Every change locks the gate, is refused on a decided gate (its criteria are the evidence the decision
froze: reopen it first), writes one audit row on the gate, and queues a re-evaluation, since the
gate's last judgement was made against the criteria as they were."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.transitions import require_state
from metrics.models import MetricDefinition
from metrics.public import group_by_check, tag_filters_check
from program import policies
from program.evaluation import distribution_null_ratio
from program.models import Criterion, Gate
from program.services.gate_queue import gate_evaluation_queue
from program.services.gates import MSG_ALREADY_DECIDED, require_gate_state, require_phase_not_completed
from program.versions import active_versions, pinned_keys, stale_moves

# What a lead may change on a criterion (PATCH /api/v1/criteria/{id}/, the edit form).
EDITABLE_FIELDS = (
    "name",
    "kind",
    "metric",
    "workload",
    "statistic",
    "operator",
    "threshold",
    "window_days",
    "tag_filters",
    "group_by",
    "min_samples",
    "require_significant",
    "required",
    "excluded_metrics",
)
# A manual criterion has no measurement: these are cleared when one becomes manual.
MEASUREMENT_FIELDS: dict[str, Any] = {
    "metric": None,
    "workload": None,
    "statistic": "",
    "threshold": None,
    "tag_filters": {},
    "group_by": "",
    "excluded_metrics": [],
}
# An every-metric criterion compares every active metric, each by its own statistic and interval
# (program.evaluation_every): these mean nothing for it and are cleared when one becomes one.
EVERY_METRIC_CLEARED: dict[str, Any] = {
    "metric": None,
    "slot": "",
    "statistic": "",
    "tag_filters": {},
    "group_by": "",
}
MSG_EVERY_METRIC_NO_METRIC = "An every-metric criterion compares every active metric; it takes no metric."
MSG_EVERY_METRIC_STATISTIC = (
    "An every-metric criterion judges each metric by its own statistic; leave statistic empty."
)
MSG_EVERY_METRIC_OPERATOR = "An every-metric criterion asks for at least as good: operator gte (or gt)."
MSG_EVERY_METRIC_THRESHOLD = (
    "An every-metric criterion's threshold is a relative performance above 0 (1.0: no margin)."
)
MSG_EVERY_METRIC_SLICED = "An every-metric criterion compares whole metrics: no tag filters or group-by."
MSG_EXCLUDED_ONLY_EVERY = "Only an every-metric criterion excludes metrics."
MSG_EXCLUDED_SHAPE = 'excluded_metrics is a list of {"metric": key, "reason": why}.'
MSG_EXCLUDED_REASON = "Excluding {key} needs a reason."
MSG_EXCLUDED_UNKNOWN = "Unknown metric '{key}' in excluded_metrics."
MSG_EXCLUDED_TWICE = "{key} is excluded twice."
# An attestation vouches for one checklist item as worded: rewording it (or making it measured)
# withdraws the attestation.
ATTESTED_WORDING = {"name", "kind"}
MSG_DEPRECATED = "{ref} is deprecated; pin the active version, {active}."
MSG_DEPRECATED_NO_ACTIVE = "{ref} is deprecated and '{key}' has no active version to pin."


def _locked_gate(gate_id: int, action: str) -> Gate:
    gate = Gate.objects.select_for_update().get(pk=gate_id)
    require_gate_state(gate, action, message=MSG_ALREADY_DECIDED)
    return gate


def _current(criterion: Criterion) -> Criterion:
    """The criterion as it is now, read under its gate's lock; one deleted meanwhile is a 404."""
    current = Criterion.objects.select_related("metric", "workload").filter(pk=criterion.pk).first()
    if current is None:
        raise ApplicationError(f"Criterion '{criterion.name}' was deleted.", status=404)
    return current


def _require_pinnable(metric: MetricDefinition) -> None:
    """A criterion pins an active version: a draft may still change (400), a deprecated one was
    replaced (409, naming what replaced it)."""
    if metric.status == MetricDefinition.Status.DRAFT:
        raise ApplicationError(f"{metric.ref} is a draft.", status=400, field="metric")
    if metric.status == MetricDefinition.Status.DEPRECATED:
        active = active_versions([metric.key]).get(metric.key)
        message = (
            MSG_DEPRECATED.format(ref=metric.ref, active=active.ref)
            if active
            else MSG_DEPRECATED_NO_ACTIVE.format(ref=metric.ref, key=metric.key)
        )
        raise ApplicationError(
            message, status=409, field="metric", extra={"active": getattr(active, "ref", None)}
        )


def _require_testable_distribution(criterion: Criterion) -> None:
    """A `distribution` criterion tests the candidate against the baseline moved by its threshold,
    so it needs two sides (relative or improvement) and a threshold above 0 × the baseline."""
    if criterion.statistic != "distribution":
        return
    if criterion.kind == Criterion.Kind.ABSOLUTE:
        raise ApplicationError(
            "'distribution' compares two systems; an absolute criterion needs one side's statistic.",
            status=400,
            field="statistic",
        )
    if distribution_null_ratio(criterion) is None:
        raise ApplicationError(
            "A distribution criterion's threshold must be above 0 × the baseline "
            "(relative > 0, improvement > −100 %).",
            status=400,
            field="threshold",
        )


def excluded_metrics_check(value: Any) -> list[dict[str, str]]:
    """[{"metric": key, "reason": why}], each a known key (any version: excluding a key excludes its
    versions) with a reason, none twice; 400 naming `excluded_metrics` otherwise."""

    def bad(message: str) -> ApplicationError:
        return ApplicationError(message, status=400, field="excluded_metrics")

    if not isinstance(value, list):
        raise bad(MSG_EXCLUDED_SHAPE)
    cleaned: list[dict[str, str]] = []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"metric", "reason"}:
            raise bad(MSG_EXCLUDED_SHAPE)
        key, reason = item["metric"], item["reason"]
        if not isinstance(key, str) or not isinstance(reason, str):
            raise bad(MSG_EXCLUDED_SHAPE)
        key, reason = key.strip(), reason.strip()
        if not reason:
            raise bad(MSG_EXCLUDED_REASON.format(key=key))
        if any(e["metric"] == key for e in cleaned):
            raise bad(MSG_EXCLUDED_TWICE.format(key=key))
        cleaned.append({"metric": key, "reason": reason})
    keys = {e["metric"] for e in cleaned}
    known = (
        set(MetricDefinition.objects.filter(key__in=keys).values_list("key", flat=True)) if keys else set()
    )
    for entry in cleaned:
        if entry["metric"] not in known:
            raise bad(MSG_EXCLUDED_UNKNOWN.format(key=entry["metric"]))
    return cleaned


def _require_valid_every_metric(criterion: Criterion) -> None:
    def bad(message: str, field: str) -> ApplicationError:
        return ApplicationError(message, status=400, field=field)

    if criterion.metric is not None:
        raise bad(MSG_EVERY_METRIC_NO_METRIC, "metric")
    if criterion.statistic:
        raise bad(MSG_EVERY_METRIC_STATISTIC, "statistic")
    if criterion.operator not in (Criterion.Operator.GTE, Criterion.Operator.GT):
        raise bad(MSG_EVERY_METRIC_OPERATOR, "operator")
    if criterion.threshold is None or criterion.threshold <= 0:
        raise bad(MSG_EVERY_METRIC_THRESHOLD, "threshold")
    if criterion.tag_filters or criterion.group_by:
        raise bad(MSG_EVERY_METRIC_SLICED, "tag_filters" if criterion.tag_filters else "group_by")


def _require_valid(criterion: Criterion, *, check_pin: bool) -> None:
    """The rules a criterion keeps whether it is added or edited (the API's serializers check types)."""
    if not criterion.name.strip():
        raise ApplicationError("A criterion needs a name.", status=400, field="name")
    if criterion.kind not in Criterion.Kind.values:
        raise ApplicationError(f"Unknown kind '{criterion.kind}'.", status=400, field="kind")
    if criterion.min_samples is None or criterion.min_samples < 2:
        raise ApplicationError("min_samples must be at least 2.", status=400, field="min_samples")
    criterion.tag_filters = tag_filters_check(criterion.tag_filters)
    criterion.group_by = group_by_check(criterion.group_by) or ""
    criterion.excluded_metrics = excluded_metrics_check(criterion.excluded_metrics or [])
    if criterion.excluded_metrics and criterion.kind != Criterion.Kind.EVERY_METRIC:
        raise ApplicationError(MSG_EXCLUDED_ONLY_EVERY, status=400, field="excluded_metrics")
    if criterion.kind == Criterion.Kind.MANUAL:
        return
    if criterion.kind == Criterion.Kind.EVERY_METRIC:
        _require_valid_every_metric(criterion)
        return
    # An unbound template slot (a `slot` field, where the model has one) waits for its metric.
    if criterion.metric is None and not getattr(criterion, "slot", ""):
        raise ApplicationError("A measured criterion needs a metric (key@N).", status=400, field="metric")
    if criterion.threshold is None:
        raise ApplicationError("A measured criterion needs a threshold.", status=400, field="threshold")
    if check_pin and criterion.metric is not None:
        _require_pinnable(criterion.metric)
    _require_testable_distribution(criterion)


def _shown(value: object) -> object:
    """A field's value as the audit row keeps it: metrics by ref, workloads by key."""
    if isinstance(value, MetricDefinition):
        return value.ref
    return getattr(value, "key", value)


@transaction.atomic
def criterion_add(*, actor: User, gate: Gate, **fields: Any) -> Criterion:
    """Program leads only. A criterion pins its metric version; only undecided gates take new criteria."""
    policies.require_lead_of_gate(actor, gate, "add criteria")
    gate = _locked_gate(gate.pk, "add_criterion")
    criterion = Criterion(gate=gate, **fields)
    if criterion.kind == Criterion.Kind.MANUAL:
        for field, empty in MEASUREMENT_FIELDS.items():
            setattr(criterion, field, empty)
    if criterion.kind == Criterion.Kind.EVERY_METRIC:
        criterion.require_significant = True  # judged on each metric's interval, always
    _require_valid(criterion, check_pin=True)
    criterion.save()
    transition_record(
        subject=gate,
        action="criterion_added",
        actor=actor,
        data={"criterion": criterion.name, "id": criterion.pk},
    )
    gate_evaluation_queue(gate_id=gate.pk)
    return criterion


@transaction.atomic
def criterion_edit(*, actor: User, criterion: Criterion, **changes: Any) -> Criterion:
    """Program leads only. Change any of EDITABLE_FIELDS; the audit row keeps each changed field as
    [old, new]. A changed metric must be pinnable; an unchanged one may stay on its old version
    (re-pinning is its own step)."""
    policies.require_lead_of_gate(actor, criterion.gate, "edit criteria")
    unknown = sorted(set(changes) - set(EDITABLE_FIELDS))
    if unknown:
        raise ApplicationError(f"'{unknown[0]}' cannot be edited.", status=400, field=unknown[0])
    gate = _locked_gate(criterion.gate_id, "edit_criterion")
    criterion = _current(criterion)
    criterion.gate = gate
    kind = changes.get("kind", criterion.kind)
    if kind == Criterion.Kind.MANUAL:
        changes = {**changes, **MEASUREMENT_FIELDS}
    elif kind == Criterion.Kind.EVERY_METRIC:
        # A metric sent with it stays, so the check below refuses it rather than drop it unseen.
        changes = {**EVERY_METRIC_CLEARED, **changes, "require_significant": True}
    elif "excluded_metrics" not in changes:
        changes = {**changes, "excluded_metrics": []}
    diff = {}
    for field, new in changes.items():
        old = getattr(criterion, field)
        if old != new:
            diff[field] = [_shown(old), _shown(new)]
            setattr(criterion, field, new)
    if not diff:
        return criterion
    measured_alone = criterion.kind not in (Criterion.Kind.MANUAL, Criterion.Kind.EVERY_METRIC)
    if "metric" in diff and criterion.metric is None and measured_alone:
        # Unbinding is not an edit: an unbound slot only comes from a template (bindings never unbind).
        raise ApplicationError("A measured criterion needs a metric (key@N).", status=400, field="metric")
    # A metric or workload chosen by hand detaches the criterion from its template slot, so a later
    # binding of that slot does not overwrite the lead's choice.
    for field, slot_field in (("metric", "slot"), ("workload", "workload_slot")):
        if field in diff and getattr(criterion, field) is not None and getattr(criterion, slot_field):
            diff[slot_field] = [getattr(criterion, slot_field), ""]
            setattr(criterion, slot_field, "")
    _require_valid(criterion, check_pin="metric" in diff)
    updated = list(diff)
    data = {"criterion": criterion.name, "id": criterion.pk, "changes": diff}
    if criterion.attested_at and ATTESTED_WORDING & set(diff):
        criterion.attested_by, criterion.attested_at, criterion.attestation_link = None, None, ""
        updated += ["attested_by", "attested_at", "attestation_link"]
        data["attestation_withdrawn"] = True
    criterion.save(update_fields=updated)
    data["stale_cleared"] = _clear_stale_if_current(gate)
    transition_record(subject=gate, action="criterion_edited", actor=actor, data=data)
    gate_evaluation_queue(gate_id=gate.pk)
    return criterion


@transaction.atomic
def criterion_delete(*, actor: User, criterion: Criterion) -> None:
    """Program leads only. Its results in earlier evaluations go with it; decisions keep their frozen
    evidence."""
    policies.require_lead_of_gate(actor, criterion.gate, "delete criteria")
    gate = _locked_gate(criterion.gate_id, "delete_criterion")
    criterion = _current(criterion)
    data = {
        "criterion": criterion.name,
        "id": criterion.pk,
        "metric": criterion.metric.ref if criterion.metric else None,
    }
    criterion.delete()
    data["stale_cleared"] = _clear_stale_if_current(gate)
    transition_record(subject=gate, action="criterion_deleted", actor=actor, data=data)
    gate_evaluation_queue(gate_id=gate.pk)


@transaction.atomic
def gate_repin(*, actor: User, gate: Gate) -> Gate:
    """Program leads only. Move every stale criterion (pinned to a non-active version of a key that has
    an active one) to the active version, in one step, and clear the gate's stale flag. Nothing stale:
    nothing changes."""
    policies.require_lead_of_gate(actor, gate, "re-pin criteria")
    gate = _locked_gate(gate.pk, "repin")
    criteria = list(gate.criteria.select_related("metric"))
    moves = stale_moves(criteria, active_versions(pinned_keys(criteria)))
    if not moves and not gate.stale:
        return gate
    for move in moves:
        Criterion.objects.filter(pk=move.criterion.pk).update(metric=move.to)
    gate.stale = False
    gate.save(update_fields=["stale"])
    transition_record(
        subject=gate,
        action="repinned",
        actor=actor,
        data={"moved": [move.as_record() for move in moves]},
    )
    if moves:
        gate_evaluation_queue(gate_id=gate.pk)
    return gate


def _clear_stale_if_current(gate: Gate) -> bool:
    """After an edit or a delete, a stale gate whose criteria all pin current versions is stale no more."""
    if not gate.stale:
        return False
    criteria = list(gate.criteria.select_related("metric"))
    if stale_moves(criteria, active_versions(pinned_keys(criteria))):
        return False
    gate.stale = False
    gate.save(update_fields=["stale"])
    return True


@transaction.atomic
def criterion_attest(*, actor: User, criterion: Criterion, link: str = "") -> Criterion:
    """Program leads only: the lead vouches for a manual checklist item (with a link to the proof)."""
    policies.require_lead_of_gate(actor, criterion.gate, "attest checklist items")
    if criterion.kind != Criterion.Kind.MANUAL:
        raise ApplicationError("Only manual criteria are attested; measured ones are evaluated.", status=400)
    # Locks the gate too: a decision cannot slip in between this check and the attestation.
    criterion = Criterion.objects.select_for_update().select_related("gate__phase").get(pk=criterion.pk)
    require_phase_not_completed(criterion.gate, "attesting")
    require_state(
        subject=f"Criterion '{criterion.name}'",
        state=criterion.state,
        action="attesting",
        allowed=Criterion.TRANSITIONS["attest"],
    )
    criterion.attested_by, criterion.attested_at, criterion.attestation_link = actor, timezone.now(), link
    criterion.save(update_fields=["attested_by", "attested_at", "attestation_link"])
    transition_record(
        subject=criterion.gate,
        action="attested",
        actor=actor,
        data={"criterion": criterion.name, "link": link},
    )
    return criterion
