from __future__ import annotations

import pghistory
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q

from metrics.models import ComparedStatistic, MetricDefinition, System, Workload


class Program(models.Model):
    class Status(models.TextChoices):
        # Before its start date: no phase is active yet, and it is month 0.
        NOT_STARTED = "not_started", "not started"
        ACTIVE = "active"
        COMPLETED = "completed"

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    template = models.CharField(max_length=60)
    months = models.PositiveSmallIntegerField(default=14)
    start_date = models.DateField()
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="led_programs")
    baseline_system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+")
    candidate_system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    # The rising approval bar (freeze.services.approval_bar): a medium-risk freeze exception whose change
    # starts within this many weeks before a gate's due date, or during the frontier sprint, needs one
    # approval more and a program lead among its approvers. Null: no such rule.
    approval_bar_weeks = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="Weeks before a gate's due date in which medium-risk exceptions need one more approval "
        "and a program lead. Empty: off.",
    )
    # Private: only its members and platform admins read it (program.policies.programs_readable).
    is_private = models.BooleanField(default=False)

    # Allowed-from table (core.transitions.require_state): action -> states it may start from.
    # Advancing a program not started yet starts its first phase today (early); reaching the start
    # date starts it on plan (program.services.programs.programs_start_due, which picks only
    # not-started programs).
    TRANSITIONS = {"advance": {Status.NOT_STARTED, Status.ACTIVE}}

    class Meta:
        ordering = ["-start_date", "slug"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(baseline_system=models.F("candidate_system")), name="program_systems_differ"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ProgramMembership(models.Model):
    """A user or a group (a team) holding a role in one program (program.policies decides what each
    role may do). Granted and removed only by program.services.memberships."""

    class Role(models.TextChoices):
        LEAD = "lead"
        ENGINEER = "engineer"
        VIEWER = "viewer"

    program = models.ForeignKey(Program, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="program_memberships",
    )
    group = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.CASCADE, related_name="program_memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    granted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["program", "role", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False, group__isnull=True)
                | Q(user__isnull=True, group__isnull=False),
                name="membership_user_xor_group",
            ),
            # One role per member and program; these unique indexes also serve the lookup of a
            # user's memberships (program.policies.member_roles) by program.
            models.UniqueConstraint(
                fields=["user", "program"], condition=Q(user__isnull=False), name="membership_one_per_user"
            ),
            models.UniqueConstraint(
                fields=["group", "program"], condition=Q(group__isnull=False), name="membership_one_per_group"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.member} {self.role} of {self.program.slug}"

    @property
    def member(self) -> str:
        """'user:lena' or 'group:training-platform', as the API names a member."""
        if self.user is not None:
            return f"user:{self.user.username}"
        return f"group:{self.group.name if self.group is not None else ''}"


@pghistory.track()  # re-planned dates keep their history
class Phase(models.Model):
    class Kind(models.TextChoices):
        POC = "poc", "PoC"
        CANARY = "canary", "Canary"
        CUTOVER = "cutover", "Cutover"
        FRONTIER = "frontier", "Frontier sprint"

    class Status(models.TextChoices):
        PLANNED = "planned"
        ACTIVE = "active"
        COMPLETED = "completed"

    program = models.ForeignKey(Program, on_delete=models.CASCADE, related_name="phases")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=80)
    order = models.PositiveSmallIntegerField()
    planned_start = models.DateField()
    planned_end = models.DateField()
    actual_start = models.DateField(null=True, blank=True)
    actual_end = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PLANNED)

    # Allowed-from table. A completed phase is history: its dates and gates no longer change.
    # (Advancing completes the program's active phase, which it finds by that state.)
    TRANSITIONS = {
        "replan": {Status.PLANNED, Status.ACTIVE},
        "add_gate": {Status.PLANNED, Status.ACTIVE},
        "activate": {Status.PLANNED},
        # Correcting actual dates: only a phase that has started has any.
        "backfill_dates": {Status.ACTIVE, Status.COMPLETED},
    }

    class Meta:
        ordering = ["program", "order"]
        constraints = [
            models.UniqueConstraint(fields=["program", "order"], name="phase_order_unique"),
            # Exactly one active phase per program; serves "the current phase" lookups.
            models.UniqueConstraint(
                fields=["program"], condition=Q(status="active"), name="phase_one_active"
            ),
            models.CheckConstraint(
                condition=Q(planned_end__gte=models.F("planned_start")), name="phase_dates_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.program.slug}: {self.name}"


class Gate(models.Model):
    class Kind(models.TextChoices):
        EXIT = "exit"
        MILESTONE = "milestone"

    class Status(models.TextChoices):
        OPEN = "open"
        READY = "ready"
        PASSED = "passed"
        FAILED = "failed"
        WAIVED = "waived"
        # Left undecided when its phase completed (program.services.programs.program_advance): history,
        # like a decided gate, but nobody decided it.
        CLOSED = "closed", "closed (not decided)"

    UNDECIDED = (Status.OPEN, Status.READY)
    DECIDED = (Status.PASSED, Status.FAILED, Status.WAIVED)
    # What advancing records on each gate it closes.
    CLOSED_REASON = "not decided — phase completed"
    # Allowed-from table. Evaluating a decided gate stores fresh evidence but never moves its status;
    # a closed gate takes nothing (and neither does any gate of a completed phase).
    TRANSITIONS = {
        "evaluate": {*UNDECIDED, *DECIDED},
        "decide": set(UNDECIDED),
        "reopen": set(DECIDED),
        # A decided gate's criteria are its frozen evidence: reopen it to change them.
        "add_criterion": set(UNDECIDED),
        "edit_criterion": set(UNDECIDED),
        "delete_criterion": set(UNDECIDED),
        "repin": set(UNDECIDED),
    }

    phase = models.ForeignKey(Phase, on_delete=models.CASCADE, related_name="gates")
    name = models.CharField(max_length=160)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    due_date = models.DateField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    # Set when a definition a criterion pins got a newer active version.
    stale = models.BooleanField(default=False)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    # Set by program.selectors.programs.gate_get: the evaluation whose results the gate page shows.
    latest_evaluation: Evaluation | None

    class Meta:
        ordering = ["due_date", "id"]
        constraints = [
            # One exit gate per phase: advancing asks for it.
            models.UniqueConstraint(
                fields=["phase"], condition=Q(kind="exit"), name="gate_one_exit_per_phase"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def decided(self) -> bool:
        """Decided or closed: no longer open to a decision, its evidence frozen."""
        return self.status not in self.UNDECIDED

    @property
    def closed(self) -> bool:
        return self.status == self.Status.CLOSED


class Criterion(models.Model):
    class Kind(models.TextChoices):
        RELATIVE = "relative", "relative performance"
        IMPROVEMENT = "improvement", "improvement %"
        ABSOLUTE = "absolute", "absolute threshold"
        MANUAL = "manual", "manual attestation"
        # "Fully surpasses": every active metric with data on both systems, each by its own statistic
        # (program.evaluation_every).
        EVERY_METRIC = "every_metric", "every metric at least as good"

    class Operator(models.TextChoices):
        GTE = "gte", "≥"
        GT = "gt", ">"
        LTE = "lte", "≤"
        LT = "lt", "<"

    gate = models.ForeignKey(Gate, on_delete=models.CASCADE, related_name="criteria")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    metric = models.ForeignKey(
        MetricDefinition, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    workload = models.ForeignKey(Workload, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # The template slots a criterion came from (program.blueprints). Blank for a criterion added by hand.
    # While its slot is unbound a criterion has no metric (or no workload) and evaluates as inconclusive;
    # binding the slot (program.services.bindings) fills it in. A workload slot is kept apart from
    # `workload` because no workload means "every workload", which an unbound slot must not mean.
    slot = models.CharField(max_length=40, blank=True, help_text="The template's metric slot.")
    workload_slot = models.CharField(max_length=40, blank=True, help_text="The template's workload slot.")
    statistic = models.CharField(
        max_length=12,
        choices=ComparedStatistic.choices,
        blank=True,
        help_text="Blank: the metric's statistic. 'distribution' is relative or improvement only.",
    )
    operator = models.CharField(max_length=3, choices=Operator.choices, default=Operator.GTE)
    threshold = models.FloatField(null=True, blank=True)
    window_days = models.PositiveIntegerField(null=True, blank=True, help_text="Only the last N days count.")
    # Dimension slicing (metrics.selectors.comparison.tags): only rows whose tags match count, and with
    # `group_by` the criterion must hold in every group of that tag (the worst group decides).
    tag_filters = models.JSONField(
        default=dict,
        blank=True,
        help_text='{"severity": ["sev1", "sev2"]}: OR within a key, AND across keys.',
    )
    group_by = models.CharField(
        max_length=64, blank=True, help_text="A tag key: the criterion must hold for each of its values."
    )
    # every_metric only: [{"metric": key, "reason": why}] — keys left out of "every metric", each with
    # the reason the gate page shows beside it.
    excluded_metrics = models.JSONField(
        default=list, blank=True, help_text='every_metric only: [{"metric": "key", "reason": "why"}].'
    )
    min_samples = models.PositiveIntegerField(default=30)
    require_significant = models.BooleanField(default=False)
    required = models.BooleanField(default=True, help_text="Advisory criteria are shown but never block.")
    attested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    attested_at = models.DateTimeField(null=True, blank=True)
    attestation_link = models.URLField(blank=True)

    # A criterion's state follows its attestation, and its gate: a decided gate's evidence is frozen.
    UNATTESTED, ATTESTED, LOCKED = "unattested", "attested", "locked (gate decided)"
    CLOSED = "locked (gate closed)"
    TRANSITIONS = {"attest": {UNATTESTED}}

    class Meta:
        ordering = ["gate", "id"]
        constraints = [
            # A measured criterion has a threshold and a metric, or a slot still waiting for one; an
            # every-metric criterion has a threshold and no metric of its own (it compares them all).
            models.CheckConstraint(
                condition=Q(kind="manual")
                | (Q(threshold__isnull=False) & (Q(metric__isnull=False) | ~Q(slot="")))
                | Q(kind="every_metric", threshold__isnull=False, metric__isnull=True),
                name="criterion_metric_needs_threshold",
            ),
            models.CheckConstraint(condition=Q(min_samples__gte=2), name="criterion_min_samples"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def unbound_slots(self) -> list[str]:
        """The template slots this criterion still waits for, e.g. ["throughput"]."""
        missing = []
        if self.slot and self.metric_id is None and self.kind != self.Kind.MANUAL:
            missing.append(self.slot)
        if self.workload_slot and self.workload_id is None:
            missing.append(self.workload_slot)
        return missing

    @property
    def state(self) -> str:
        if self.gate.closed:
            return self.CLOSED
        if self.gate.decided:
            return self.LOCKED
        return self.ATTESTED if self.attested_at else self.UNATTESTED


class Evaluation(models.Model):
    """One evaluation of a gate: a result per criterion. Identical inputs reuse the last one."""

    gate = models.ForeignKey(Gate, on_delete=models.CASCADE, related_name="evaluations")
    evaluated_at = models.DateTimeField(auto_now_add=True)
    checked_at = models.DateTimeField(auto_now=True)
    fingerprint = models.CharField(max_length=64)
    all_required_pass = models.BooleanField()
    failing = models.JSONField(default=list, help_text="Names of required criteria that do not pass.")

    class Meta:
        ordering = ["-evaluated_at", "-id"]
        constraints = [
            # Twice on the same data is one evaluation.
            models.UniqueConstraint(fields=["gate", "fingerprint"], name="evaluation_unique_inputs"),
        ]

    def __str__(self) -> str:
        return f"evaluation {self.pk} of gate {self.gate_id}"


class CriterionResult(models.Model):
    class Outcome(models.TextChoices):
        PASS = "pass"
        FAIL = "fail"
        INCONCLUSIVE = "inconclusive"

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="results")
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="results")
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    value = models.FloatField(null=True, blank=True, help_text="The number compared with the threshold.")
    reason = models.TextField()
    evidence = models.JSONField(default=dict, help_text="Both sides' n and statistics, ratio, p-value.")

    class Meta:
        ordering = ["criterion_id"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "criterion"], name="result_one_per_criterion"),
        ]

    def __str__(self) -> str:
        return f"{self.criterion_id}: {self.outcome}"


class Decision(models.Model):
    class Verdict(models.TextChoices):
        PASS = "pass"
        FAIL = "fail"
        WAIVE = "waive"

    gate = models.ForeignKey(Gate, on_delete=models.CASCADE, related_name="decisions")
    decision = models.CharField(max_length=6, choices=Verdict.choices)
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decided_at = models.DateTimeField(auto_now_add=True)
    evaluation = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Frozen at decision time: criteria, definition versions, both sides' numbers, p-values, when evaluated.
    evidence = models.JSONField(default=dict)
    reopened_at = models.DateTimeField(null=True, blank=True)
    reopen_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-decided_at", "-id"]
        constraints = [
            # One standing decision per gate; reopening closes it.
            models.UniqueConstraint(
                fields=["gate"], condition=Q(reopened_at__isnull=True), name="decision_one_standing"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.decision} on gate {self.gate_id}"


class WorkloadMigration(models.Model):
    class State(models.TextChoices):
        ON_OLD = "on_old", "on old"
        DUAL_RUN = "dual_run", "dual run"
        ON_NEW = "on_new", "on new"
        ROLLED_BACK = "rolled_back", "rolled back"

    program = models.ForeignKey(Program, on_delete=models.CASCADE, related_name="migrations")
    workload = models.ForeignKey(Workload, on_delete=models.PROTECT, related_name="+")
    wave = models.PositiveSmallIntegerField(help_text="0 is the canary wave.")
    state = models.CharField(max_length=12, choices=State.choices, default=State.ON_OLD)
    dual_run_started = models.DateField(null=True, blank=True)
    moved_on = models.DateField(null=True, blank=True)
    rolled_back_on = models.DateField(null=True, blank=True)
    notes = models.TextField(blank=True)

    # Allowed-from table: target state -> states it may be reached from. Nothing goes back to on_old.
    TRANSITIONS: dict[str, set[str]] = {
        State.ON_OLD: set(),
        State.DUAL_RUN: {State.ON_OLD, State.ROLLED_BACK},
        State.ON_NEW: {State.DUAL_RUN},
        State.ROLLED_BACK: {State.DUAL_RUN, State.ON_NEW},
    }

    class Meta:
        ordering = ["program", "wave", "workload__key"]
        constraints = [
            models.UniqueConstraint(fields=["program", "workload"], name="migration_one_per_workload")
        ]

    def __str__(self) -> str:
        return f"{self.workload} wave {self.wave}"

    @property
    def canary_warning(self) -> str:
        """Canaries should be medium-sized and not core-critical."""
        if self.wave != 0:
            return ""
        problems = []
        if self.workload.size == Workload.Size.SMALL:
            problems.append("small (its numbers say little about production scale)")
        if self.workload.criticality == Workload.Criticality.CORE:
            problems.append("core-critical (a failed canary would hurt the business)")
        return f"Canary workload is {' and '.join(problems)}." if problems else ""
