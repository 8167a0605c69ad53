"""The incident log: what broke, on which system and component, and how long finding and fixing it took."""

from __future__ import annotations

import pghistory
from django.conf import settings
from django.db import models
from django.db.models import F, Q

from freeze.models import Component
from metrics.models import System, Workload


@pghistory.track()
class BugClass(models.Model):
    """A kind of failure (configurable vocabulary) with the runbook a responder works through."""

    key = models.SlugField(max_length=50, unique=True)
    name = models.CharField(max_length=100)
    # The runbook checklist template: a list of step texts, copied onto each incident filed in this class.
    runbook = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "bug classes"

    def __str__(self) -> str:
        return self.name


class Severity(models.TextChoices):
    SEV1 = "sev1", "sev1 (outage)"
    SEV2 = "sev2", "sev2 (major)"
    SEV3 = "sev3", "sev3 (minor)"
    SEV4 = "sev4", "sev4 (cosmetic)"


# The four moments in the order they must come; the time-order rules and constraints walk this list.
TIME_FIELDS = ("opened_at", "detected_at", "mitigated_at", "resolved_at")


def _ordered(earlier: str, later: str) -> Q:
    return (
        Q(**{f"{earlier}__isnull": True})
        | Q(**{f"{later}__isnull": True})
        | Q(**{f"{earlier}__lte": F(later)})
    )


@pghistory.track()
class Incident(models.Model):
    """One failure on one system: opened (it began) ≤ detected ≤ mitigated ≤ resolved."""

    title = models.CharField(max_length=200)
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+")
    component = models.ForeignKey(Component, on_delete=models.PROTECT, related_name="+")
    workload = models.ForeignKey(Workload, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    bug_class = models.ForeignKey(BugClass, on_delete=models.PROTECT, related_name="incidents")
    severity = models.CharField(max_length=4, choices=Severity.choices)
    opened_at = models.DateTimeField(help_text="When the failure began.")
    detected_at = models.DateTimeField(help_text="When someone (or an alert) noticed it.")
    mitigated_at = models.DateTimeField(null=True, blank=True, help_text="When the impact stopped.")
    resolved_at = models.DateTimeField(null=True, blank=True, help_text="When the fix landed.")
    troubleshooting = models.TextField(blank=True)
    # The bug class's runbook at filing time: [{"step": "...", "done": bool}, ...].
    checklist = models.JSONField(default=list, blank=True)
    link = models.URLField(max_length=500, blank=True)
    owner_team = models.CharField(max_length=80)
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # "The same pitfall again": an earlier incident of the same root cause (and bug class) this one
    # repeats. Opened strictly before this one (services.recurrence), so links never form a cycle.
    recurrence_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="recurrences",
        help_text="An earlier incident of the same root cause that this one repeats.",
    )
    alert_fingerprint = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="The Alertmanager fingerprint of the alert that opened it (services.alerts); blank when filed by hand.",
    )
    # Bumped each time a resolved incident's evidence is rewritten (services.evidence).
    revision = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=_ordered("opened_at", "detected_at"), name="incident_detected_after_opened"
            ),
            models.CheckConstraint(
                condition=_ordered("detected_at", "mitigated_at"), name="incident_mitigated_after_detected"
            ),
            models.CheckConstraint(
                condition=_ordered("mitigated_at", "resolved_at"), name="incident_resolved_after_mitigated"
            ),
            models.CheckConstraint(
                condition=_ordered("detected_at", "resolved_at"), name="incident_resolved_after_detected"
            ),
            models.CheckConstraint(
                condition=~Q(recurrence_of=F("id")), name="incident_recurs_another_incident"
            ),
            # One open (unresolved) incident per alert fingerprint; also serves services.alerts'
            # "the open incident of this alert": WHERE alert_fingerprint = %s AND resolved_at IS NULL.
            models.UniqueConstraint(
                fields=["alert_fingerprint"],
                condition=Q(resolved_at__isnull=True) & ~Q(alert_fingerprint=""),
                name="incident_one_open_per_alert",
            ),
        ]
        indexes = [
            # The MTTR/MTTD window (selectors.incident_speed) and the list's since/until filter.
            models.Index(fields=["system", "opened_at"], name="incident_system_opened"),
            # services.alerts' "did this very alert open an incident already resolved":
            # WHERE alert_fingerprint = %s AND detected_at = %s (only alert-opened rows are indexed).
            models.Index(
                fields=["alert_fingerprint", "detected_at"],
                condition=~Q(alert_fingerprint=""),
                name="incident_alert_started",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.title}"

    @property
    def is_resolved(self) -> bool:
        return self.resolved_at is not None

    @property
    def state(self) -> str:
        if self.resolved_at:
            return "resolved"
        return "mitigated" if self.mitigated_at else "open"


class AlertRoute(models.Model):
    """Where an Alertmanager alert goes: the first route (by position) whose matchers all equal the
    alert's labels gives the new incident its system, component, workload, bug class and severity."""

    position = models.PositiveIntegerField(help_text="Routes are tried from the lowest position up.")
    # {label: value}: every one must equal the alert's label ({} matches every alert, a catch-all).
    matchers = models.JSONField(default=dict, blank=True)
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+")
    component = models.ForeignKey(Component, on_delete=models.PROTECT, related_name="+")
    workload = models.ForeignKey(Workload, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    bug_class = models.ForeignKey(BugClass, on_delete=models.PROTECT, related_name="+")
    severity = models.CharField(
        max_length=4,
        choices=Severity.choices,
        default=Severity.SEV3,
        help_text="Unless the alert's own `severity` label is one of sev1–sev4.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(self.matchers.items())) or "every alert"
        return f"#{self.position}: {shown} → {self.system.key} / {self.bug_class.key}"


class UnroutedAlert(models.Model):
    """A firing alert no route matched, kept (one row per fingerprint) so someone can add its route.
    Alertmanager sends a firing alert again every repeat_interval, so once a route exists the next
    notification opens its incident, with the alert's own startsAt."""

    fingerprint = models.CharField(max_length=64, unique=True)
    alertname = models.CharField(max_length=200, blank=True)
    labels = models.JSONField(default=dict)
    starts_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    times_seen = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["-last_seen_at", "-id"]

    def __str__(self) -> str:
        return f"{self.alertname or self.fingerprint} (unrouted)"
