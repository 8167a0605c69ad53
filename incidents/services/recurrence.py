"""What a recurrence link must be: `recurrence_of` names an earlier incident of the same root cause.

The earlier incident was opened strictly before this one and has the same bug class (the recurrence
rate is per class: "the same pitfall again"). It may be on another system: a legacy pitfall ported
into the rebuilt stack is a recurrence too, and counts for the system it recurs on. Strictly earlier
opened_at makes a cycle impossible, so it is checked both ways: linking, and changing the opened_at
or class of an incident that others recur. Each refusal is a 400 naming the field sent."""

from __future__ import annotations

from datetime import datetime

from core.errors import ApplicationError
from incidents.models import BugClass, Incident

MSG_ITSELF = "An incident cannot be a recurrence of itself."
MSG_LATER = (
    "recurrence_of must name an incident opened before this one: #{pk} opened at {at:%Y-%m-%d %H:%M} UTC."
)
MSG_CLASS = "recurrence_of names #{pk}, a {other} incident; a recurrence has the same bug class ({mine})."
MSG_RECURRED = "#{pk} is a recurrence of this incident; {field} must keep it {rule}."


def recurrence_check(
    *,
    incident: Incident | None,
    earlier: Incident | None,
    bug_class: BugClass,
    opened_at: datetime,
    field: str = "recurrence_of",
) -> None:
    """Refuse (400) a link that is not to an earlier incident of the same class. `incident` is None
    while filing; `field` is the one the request changed, named in the refusal."""
    if earlier is None:
        return
    if incident is not None and earlier.pk == incident.pk:
        raise ApplicationError(MSG_ITSELF, status=400, field="recurrence_of")
    if earlier.opened_at >= opened_at:
        raise ApplicationError(MSG_LATER.format(pk=earlier.pk, at=earlier.opened_at), status=400, field=field)
    if earlier.bug_class_id != bug_class.pk:
        raise ApplicationError(
            MSG_CLASS.format(pk=earlier.pk, other=earlier.bug_class.key, mine=bug_class.key),
            status=400,
            field=field,
        )


def recurrences_still_valid(*, incident: Incident, changed: list[str]) -> None:
    """After a change of opened_at or bug_class: every incident recurring this one still opened later
    and has the same class (refused, naming the changed field, otherwise)."""
    for name, rule in (("opened_at", "opened after this one"), ("bug_class", "of the same class")):
        if name not in changed:
            continue
        later = incident.recurrences.all()
        broken = (
            later.filter(opened_at__lte=incident.opened_at)
            if name == "opened_at"
            else later.exclude(bug_class_id=incident.bug_class_id)
        ).first()
        if broken is not None:
            raise ApplicationError(
                MSG_RECURRED.format(pk=broken.pk, field=name, rule=rule), status=400, field=name
            )
