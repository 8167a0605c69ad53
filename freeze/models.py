from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import cast

import pghistory
from django.conf import settings
from django.db import models
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone
from django_fsm import FSMField, transition

from metrics.models import MetricDefinition
from program.models import Phase, Program


class Level(models.TextChoices):
    OPEN = "open", "open — may change"
    APPROVAL = "approval", "needs special approval"
    FROZEN = "frozen", "frozen — forbidden"


# Stricter levels win where windows overlap.
LEVEL_RANK: dict[str, int] = {Level.OPEN: 0, Level.APPROVAL: 1, Level.FROZEN: 2}


class Component(models.Model):
    class Layer(models.TextChoices):
        HARDWARE = "hardware"
        NETWORK = "network"
        COMMUNICATION = "communication"
        TRAINING_FRAMEWORK = "training_framework", "Training framework"
        DATA_PIPELINE = "data_pipeline", "Data pipeline"
        STORAGE = "storage"
        INFERENCE = "inference"
        SCHEDULER = "scheduler"
        OBSERVABILITY = "observability"
        TOOLING = "tooling"

    key = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=120)
    layer = models.CharField(max_length=20, choices=Layer.choices)
    owner_team = models.CharField(max_length=80, help_text="Members of this group approve its exceptions.")
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["layer", "key"]

    def __str__(self) -> str:
        return self.key


class FreezeWindow(models.Model):
    program = models.ForeignKey(Program, on_delete=models.CASCADE, related_name="freeze_windows")
    name = models.CharField(max_length=120)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    default_level = models.CharField(max_length=10, choices=Level.choices, default=Level.APPROVAL)
    # A window that follows a phase moves when the phase is re-planned (the frontier sprint's default).
    phase = models.ForeignKey(Phase, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Recurring windows (freeze.recurrence): starts_at..ends_at bounds the season; occurrences start
    # at the RRULE's recurrences of starts_at, read as wall-clock time in `timezone`, and each lasts
    # `occurrence_duration` of wall-clock time (a weekend freeze stays Fri 18:00 – Mon 08:00 across DST).
    rrule = models.CharField(
        max_length=500, blank=True, help_text="RFC 5545 RRULE, e.g. FREQ=WEEKLY;BYDAY=FR. Empty: one span."
    )
    timezone = models.CharField(max_length=64, default="UTC", help_text="IANA name the RRULE is read in.")
    occurrence_duration = models.DurationField(
        null=True, blank=True, help_text="How long each occurrence lasts (recurring windows only)."
    )

    # The span a page shows for it (a recurring window's occurrence in force), set by freeze.pages.freeze_list.
    shown_span: tuple[datetime, datetime] | None = None

    class Meta:
        ordering = ["starts_at"]
        constraints = [
            models.CheckConstraint(condition=Q(ends_at__gt=F("starts_at")), name="window_ends_after_start")
        ]
        indexes = [models.Index(fields=["starts_at", "ends_at"], name="window_span_idx")]

    def __str__(self) -> str:
        return self.name

    @property
    def is_recurring(self) -> bool:
        return bool(self.rrule)

    def contains(self, moment: datetime) -> bool:
        return self.occurrence_at(moment) is not None

    def occurrence_at(self, moment: datetime) -> tuple[datetime, datetime] | None:
        """The (start, end) of this window's span in force at `moment`, None outside it."""
        from freeze.recurrence import occurrence_at

        return occurrence_at(self, moment)


# Every level change keeps its history, a level set back to the window's default (a deleted row) too.
@pghistory.track(pghistory.InsertEvent(), pghistory.UpdateEvent(), pghistory.DeleteEvent())
class FreezeEntry(models.Model):
    window = models.ForeignKey(FreezeWindow, on_delete=models.CASCADE, related_name="entries")
    component = models.ForeignKey(Component, on_delete=models.CASCADE, related_name="freeze_entries")
    level = models.CharField(max_length=10, choices=Level.choices)

    class Meta:
        verbose_name_plural = "freeze entries"
        constraints = [
            models.UniqueConstraint(fields=["window", "component"], name="entry_one_per_component")
        ]

    def __str__(self) -> str:
        return f"{self.component} {self.level} in {self.window}"


class ExceptionQuerySet(models.QuerySet["FreezeException"]):
    """The one place the effective status is written for queries: filters, counts and lists read it."""

    def with_effective_status(self) -> ExceptionQuerySet:
        """Annotate `current_status`: an open exception whose change window has ended reads `expired`
        (expiry is at read time; the periodic sweep only catches the row up)."""
        ended = Q(status__in=FreezeException.OPEN_STATUSES, change_ends_at__lte=timezone.now())
        return self.annotate(
            current_status=Case(
                When(ended, then=Value(FreezeException.Status.EXPIRED)),
                default=F("status"),
                output_field=models.CharField(),
            )
        )

    def effective_status_in(self, statuses: Iterable[str]) -> ExceptionQuerySet:
        # current_status is with_effective_status's annotation: django-stubs checks the lookup against the
        # model's fields and does not see a custom QuerySet method's annotate() (django-stubs #2917).
        return self.with_effective_status().filter(current_status__in=list(statuses))  # type: ignore[misc]


def change_window_open(exception: models.Model) -> bool:
    """The condition on every transition but `expire`: once the change window has ended the exception
    is expired, whatever its row still says, and nothing more can happen to it. (Typed as django-fsm
    types a condition: it receives the model instance.)"""
    assert isinstance(exception, FreezeException)
    return exception.effective_status != FreezeException.Status.EXPIRED


class FreezeException(models.Model):
    class Risk(models.TextChoices):
        LOW = "low"
        MEDIUM = "medium"
        HIGH = "high"

    class Status(models.TextChoices):
        DRAFT = "draft"
        SUBMITTED = "submitted"
        APPROVED = "approved"
        REJECTED = "rejected"
        WITHDRAWN = "withdrawn"
        EXPIRED = "expired"
        REVOKED = "revoked"

    # Editing any of these after submission changes what was approved.
    MATERIAL_FIELDS = (
        "change",
        "justification",
        "risk",
        "rollback_plan",
        "change_starts_at",
        "change_ends_at",
    )
    OPEN_STATUSES = (Status.DRAFT, Status.SUBMITTED, Status.APPROVED)
    # The ids of its authors, read once per object (freeze.selectors.exceptions._author_ids).
    _author_ids_cache: frozenset[int] | None = None

    component = models.ForeignKey(Component, on_delete=models.PROTECT, related_name="exceptions")
    window = models.ForeignKey(FreezeWindow, on_delete=models.PROTECT, related_name="exceptions")
    requester = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    last_editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # Separation of duties: whoever wrote any of it — the requester, every editor — never decides it.
    authors = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        related_name="+",
        help_text="The requester and everyone who edited it; none of them may approve or reject it.",
    )
    title = models.CharField(max_length=160)
    change = models.TextField(help_text="What changes, concretely (versions, flags, hosts).")
    justification = models.TextField(help_text="Why it cannot wait until the freeze ends.")
    risk = models.CharField(max_length=6, choices=Risk.choices)
    rollback_plan = models.TextField(help_text="How to undo it, and how long that takes.")
    change_starts_at = models.DateTimeField()
    change_ends_at = models.DateTimeField()
    # The state machine (django-fsm-2); services lock the row before calling a transition.
    status = FSMField(default=Status.DRAFT, choices=Status.choices)
    required_approvals = models.PositiveSmallIntegerField(default=1, help_text="Fixed at submission.")
    # Fixed at submission with required_approvals (freeze.services.approval_bar): whether a program
    # lead must be among the approvers, and which rule set both, in words, for the page.
    requires_lead_approval = models.BooleanField(default=False, help_text="Fixed at submission.")
    approval_rule = models.TextField(blank=True, help_text="Which rule set the approvals needed, and why.")
    # The gate metrics the change may move: approving, revoking or expiring it re-evaluates the
    # undecided gates whose criteria use them (freeze.services.gate_impact). Not material: naming a
    # metric changes what is watched, not what ships. Matched by key, so any pinned version counts.
    affected_metrics = models.ManyToManyField(
        MetricDefinition, blank=True, related_name="+", help_text="Gate metrics this change may affect."
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    closing_reason = models.TextField(blank=True)
    expiry_warned_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ExceptionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(change_ends_at__gt=F("change_starts_at")),
                name="exception_change_ends_after_start",
            ),
        ]
        indexes = [
            # The freeze check: approved exceptions of a component, by change window.
            models.Index(fields=["component", "status", "change_ends_at"], name="exception_check_idx"),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def effective_status(self) -> str:
        """An open exception is expired the moment its change window ends, whatever the row says: an
        approved one stops counting, and nothing more can happen to any of them. This is the row-in-hand
        form of ExceptionQuerySet.with_effective_status (which lists, filters and counts use); the
        tests hold the two to the same answers."""
        if self.status in self.OPEN_STATUSES and self.change_ends_at <= timezone.now():
            return self.Status.EXPIRED
        return cast(str, self.status)  # django-fsm's field descriptor reads as Any

    # The one transition guard: each transition's `source=` list is the allowed-from table, and its
    # `conditions=` refuse every move but `expire` once the change window has ended. Services and the
    # allowed-actions selector ask django-fsm's can_proceed; nothing else restates these rules.
    @transition(field=status, source=OPEN_STATUSES, target=None, conditions=[change_window_open])
    def edit(self) -> None:
        """No state change by itself: a material edit after submission also resubmits."""

    @transition(field=status, source=Status.DRAFT, target=Status.SUBMITTED, conditions=[change_window_open])
    def submit(self) -> None:
        self.submitted_at = timezone.now()

    @transition(
        field=status,
        source=[Status.SUBMITTED, Status.APPROVED],
        target=Status.SUBMITTED,
        conditions=[change_window_open],
    )
    def resubmit(self) -> None:
        self.submitted_at = timezone.now()
        self.decided_at = None

    @transition(
        field=status, source=Status.SUBMITTED, target=Status.APPROVED, conditions=[change_window_open]
    )
    def approve(self) -> None:
        self.decided_at = timezone.now()

    @transition(
        field=status, source=Status.SUBMITTED, target=Status.REJECTED, conditions=[change_window_open]
    )
    def reject(self) -> None:
        self.decided_at = timezone.now()

    @transition(
        field=status,
        source=[Status.DRAFT, Status.SUBMITTED, Status.APPROVED],
        target=Status.WITHDRAWN,
        conditions=[change_window_open],
    )
    def withdraw(self) -> None:
        pass

    @transition(field=status, source=Status.APPROVED, target=Status.REVOKED, conditions=[change_window_open])
    def revoke(self) -> None:
        pass

    @transition(field=status, source=OPEN_STATUSES, target=Status.EXPIRED)
    def expire(self) -> None:
        pass


class ExpectedImpact(models.Model):
    """What the requester expects the change to do to one gate metric it names (affected_metrics):
    the direction and size, in percent of the metric's value, that the before/after comparison
    (freeze.selectors.impact) is set beside once the change window has ended."""

    class Direction(models.TextChoices):
        BETTER = "better", "better"
        WORSE = "worse", "worse"
        UNCHANGED = "unchanged", "unchanged (within ± size)"

    exception = models.ForeignKey(FreezeException, on_delete=models.CASCADE, related_name="expected_impacts")
    # The definition row the exception's affected_metrics holds for this key (matched by key, like it).
    metric = models.ForeignKey(MetricDefinition, on_delete=models.PROTECT, related_name="+")
    direction = models.CharField(max_length=9, choices=Direction.choices)
    size_pct = models.FloatField(
        help_text="How much better or worse, in percent of the metric's value; for unchanged, the band (±)."
    )

    class Meta:
        ordering = ["metric__key"]
        constraints = [
            models.UniqueConstraint(fields=["exception", "metric"], name="expected_impact_one_per_metric"),
            models.CheckConstraint(
                condition=Q(size_pct__gte=0) & Q(size_pct__lte=1000), name="expected_impact_size_in_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.direction} {self.size_pct:g} %"


class Approval(models.Model):
    class Verdict(models.TextChoices):
        APPROVE = "approve"
        REJECT = "reject"

    exception = models.ForeignKey(FreezeException, on_delete=models.CASCADE, related_name="approvals")
    approver = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=7, choices=Verdict.choices)
    comment = models.TextField(blank=True)
    as_program_lead = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # A material edit dismisses earlier approvals; they stay as history.
    dismissed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            # One person counts once per round of review.
            models.UniqueConstraint(
                fields=["exception", "approver"],
                condition=Q(dismissed_at__isnull=True),
                name="approval_one_per_person",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} by {self.approver_id}"


class FreezeOverride(models.Model):
    """A program lead's break-glass: the component may change until `ends_at` whatever its level.
    At most 24 h long; a lead other than the opener writes a review note within 72 h of opening."""

    MAX_LENGTH = timedelta(hours=24)
    REVIEW_WITHIN = timedelta(hours=72)
    # Whether the viewer may write its review, set by freeze.pages.overrides on the awaiting ones.
    may_review: bool

    component = models.ForeignKey(Component, on_delete=models.PROTECT, related_name="overrides")
    opened_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reason = models.TextField()
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    review_note = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    overdue_warned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-starts_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(ends_at__gt=F("starts_at")), name="override_ends_after_start"),
        ]
        indexes = [
            # The freeze check: overrides of a component in force at a moment.
            models.Index(fields=["component", "ends_at"], name="override_check_idx"),
            models.Index(fields=["reviewed_at", "starts_at"], name="override_review_idx"),
        ]

    def __str__(self) -> str:
        return f"override #{self.pk} on {self.component_id}"

    def in_force(self, moment: datetime | None = None) -> bool:
        moment = moment or timezone.now()
        return self.starts_at <= moment < self.ends_at

    @property
    def review_due_at(self) -> datetime:
        return self.starts_at + self.REVIEW_WITHIN

    @property
    def review_status(self) -> str:
        """reviewed, overdue (no note 72 h after opening) or awaiting."""
        if self.reviewed_at is not None:
            return "reviewed"
        return "overdue" if timezone.now() >= self.review_due_at else "awaiting"
