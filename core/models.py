from __future__ import annotations

import uuid
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from core.notification_kinds import Kind, kind_of
from core.webhook_bodies import Format


class Transition(models.Model):
    """Append-only audit row for one state change: who, when, from, to, why.

    Every service that changes a state writes one in the same transaction; pages show them as history.
    """

    content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    object_id = models.BigIntegerField()
    subject = GenericForeignKey("content_type", "object_id")
    action = models.CharField(max_length=40)
    from_state = models.CharField(max_length=40, blank=True)
    to_state = models.CharField(max_length=40, blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    reason = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["at", "id"]
        # Serves "history of one object", the query every detail page runs.
        indexes = [models.Index(fields=["content_type", "object_id", "at"], name="transition_subject_idx")]

    def __str__(self) -> str:
        return f"{self.action}: {self.from_state} → {self.to_state}"


class WebhookEndpoint(models.Model):
    """A receiver of signed webhooks (Standard Webhooks), e.g. a chat bridge or a program dashboard.

    Managed through core/services/webhooks.py (page /account/webhooks/, API /api/v1/webhooks/): program
    leads for their program, platform admins for all (core.policies.may_manage_webhooks)."""

    name = models.CharField(max_length=100)
    url = models.URLField()
    # "whsec_" + base64 secret, as Standard Webhooks expects. Kept in clear: signing needs it. Shown once,
    # when the endpoint is created; never listed again.
    secret = models.CharField(max_length=200)
    # A program's key (its slug); blank: every program's notices, and those about no program. A string,
    # not a foreign key: core does not import the program app.
    program_key = models.CharField(max_length=80, blank=True)
    events = models.JSONField(
        default=list,
        blank=True,
        help_text="Kinds (gates, exceptions…) or event names to send; empty means all.",
    )
    is_active = models.BooleanField(default=True)
    # The body's shape (core.webhook_bodies): Slack and Teams reject the standard one. Their URL is
    # their secret, so they get no signature headers; the secret above is kept for a switch back.
    format = models.CharField(max_length=20, choices=Format.choices, default=Format.STANDARD)

    def __str__(self) -> str:
        return self.name

    @property
    def url_listed(self) -> str:
        """The URL as lists show it: a Slack or Teams URL's path and query are its secret, so only its
        host is listed (the edit form, for those who manage it, has it whole)."""
        if self.format == Format.STANDARD:
            return self.url
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}/…"

    def wants(self, event: str, program_key: str = "") -> bool:
        """An endpoint scoped to a program hears only notices about that program."""
        if not self.is_active or (self.program_key and self.program_key != program_key):
            return False
        return not self.events or event in self.events or kind_of(event) in self.events


class Notification(models.Model):
    """One thing worth telling people about (gate decided, exception submitted…)."""

    event = models.CharField(max_length=60, db_index=True)
    subject = models.CharField(max_length=200)
    body = models.TextField()
    payload = models.JSONField(default=dict)
    # Site-relative path of the object it is about ("/programs/gates/12/"); emails and webhooks get it
    # made absolute with SITE_URL at delivery, the in-app inbox links to it as it is.
    link = models.CharField(max_length=500, blank=True)
    # The program it is about (its key), for webhook endpoints scoped to one; blank: none or unknown.
    program_key = models.CharField(max_length=80, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.subject

    @property
    def kind(self) -> Kind:
        return kind_of(self.event)


class NotificationReceipt(models.Model):
    """A notification in one user's in-app inbox; read once read_at is set, done once done_at is set.

    A notice that asks for an action (core.inbox_groups.TO_DO) stays on the inbox's to-do list until
    that action is taken, by this user or anyone (core.services.inbox.notices_clear); reading it does
    not do it."""

    notification = models.ForeignKey(Notification, on_delete=models.CASCADE, related_name="receipts")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_receipts"
    )
    read_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)
    # Owed in the user's daily digest email: they chose the digest for this kind when it was sent. Decided
    # at sending, so a later change of preference neither repeats an email nor drops a notice.
    in_digest = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["notification", "user"], name="receipt_one_per_user"),
        ]
        indexes = [
            # Serves the inbox list (newest first) of one user.
            models.Index(fields=["user", "-notification"], name="receipt_inbox_idx"),
            # Serves the header's unread count, run on every page: only unread rows are indexed.
            models.Index(
                fields=["user"], condition=models.Q(read_at__isnull=True), name="receipt_unread_idx"
            ),
            # Serves the daily digest's query: only receipts owed in a digest are indexed.
            models.Index(
                fields=["notification"], condition=models.Q(in_digest=True), name="receipt_digest_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.notification_id}"


class NotificationPreference(models.Model):
    """How one user hears of one kind of notice. No row: in-app and email, as before preferences existed.
    The in-app receipt is written whatever the channel."""

    class Channel(models.TextChoices):
        IN_APP = "in_app", "In-app only"
        EMAIL = "email", "In-app and email"
        DIGEST = "digest", "In-app and a daily digest email"

    DEFAULT = Channel.EMAIL

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preferences"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    channel = models.CharField(max_length=10, choices=Channel.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "kind"], name="preference_one_per_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.kind} → {self.channel}"


class NotificationDigest(models.Model):
    """One user's daily digest of one day, written with the email's notification: the row that makes a
    second run of the digest task (two beats, a retry) send nothing more."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    day = models.DateField(help_text="The UTC date the digest was sent on; it covers the 24 h before.")
    notification = models.OneToOneField(
        Notification, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    notices = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "day"], name="digest_one_per_user_day")]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.day}"


class Delivery(models.Model):
    """One attempt-tracked delivery of a notification: an email to its recipients, or one webhook."""

    class Channel(models.TextChoices):
        EMAIL = "email"
        WEBHOOK = "webhook"

    class Status(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"
        DELIVERED = "delivered"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    notification = models.ForeignKey(Notification, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.CharField(max_length=10, choices=Channel.choices)
    recipients = models.JSONField(default=list, blank=True)
    endpoint = models.ForeignKey(WebhookEndpoint, null=True, blank=True, on_delete=models.CASCADE)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    claimed_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        verbose_name_plural = "deliveries"

    def __str__(self) -> str:
        return f"{self.channel} {self.status}"


class IdempotencyRecord(models.Model):
    """The first answer to a request sent with an Idempotency-Key, replayed for repeats."""

    KEY_MAX_LENGTH = 200

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    scope = models.CharField(max_length=100)
    key = models.CharField(max_length=KEY_MAX_LENGTH)
    request_hash = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField()
    response_body = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "scope", "key"], name="idempotency_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.scope}:{self.key}"


class OutboxMessage(models.Model):
    """A task to run because of a change, written in the same transaction as the change (core.outbox).

    It is published after the commit and re-published by the sweep until a worker finishes it, so a
    broker outage or a lost message delays the follow-up but never loses it.
    """

    task = models.CharField(max_length=200, help_text="Registered Celery task name.")
    args = models.JSONField(default=list, blank=True)
    # Coalescing: at most one not-yet-started message per key (e.g. one evaluation per gate).
    key = models.CharField(max_length=200, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Last publish to the broker; the sweep re-publishes a message not finished this long after it.
    sent_at = models.DateTimeField(null=True, blank=True)
    send_count = models.PositiveIntegerField(default=0)
    # A worker's claim: it runs the task until lease_until; a later claim after that takes over.
    started_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    lease_owner = models.CharField(max_length=64, blank=True, help_text="Celery task id holding the lease.")
    done_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        constraints = [
            # Serves the ON CONFLICT of outbox_add(key=…): one pending message per key.
            models.UniqueConstraint(
                fields=["key"],
                condition=models.Q(done_at__isnull=True, started_at__isnull=True, key__isnull=False),
                name="outbox_one_pending_per_key",
            ),
        ]
        indexes = [
            # Serves the sweep: unfinished messages, oldest publish first.
            models.Index(
                fields=["sent_at"], condition=models.Q(done_at__isnull=True), name="outbox_unfinished_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task}{tuple(self.args)}"


class Heartbeat(models.Model):
    """The last time a periodic task sent by beat was run by a worker (core.heartbeat): the proof, visible
    on /healthz and in the admin, that both background processes are alive."""

    name = models.CharField(max_length=100, primary_key=True)
    at = models.DateTimeField()
    worker = models.CharField(max_length=200, blank=True, help_text="Hostname of the worker that ran it.")

    def __str__(self) -> str:
        return f"{self.name} at {self.at:%Y-%m-%d %H:%M:%S}"


class ApiToken(models.Model):
    """A named API token with scopes and an expiry; only a digest of its secret is stored.

    The secret is shown once, when the token is made (core/services/api_tokens.py). A request presents it
    and is looked up by `digest` (core/api/token_auth.py). Our own model rather than django-rest-knox:
    knox has neither names nor scopes, and both are what a user manages here.
    """

    class Scope(models.TextChoices):
        INGEST = "ingest", "ingest: push observations (batch and OTLP)"
        FREEZE_CHECK = "freeze-check", "freeze-check: read the freeze check"
        READ = "read", "read: everything this user may read"
        FULL = "full", "full: everything this user may do"
        ALERTS = "alerts", "alerts: open and mitigate incidents from Alertmanager"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    # The secret's first characters, kept to tell tokens apart in lists and logs; not enough to use it.
    prefix = models.CharField(max_length=8)
    # SHA-256 (hex) of the whole secret: what a request's token is looked up by.
    digest = models.CharField(max_length=64, unique=True)
    scopes = ArrayField(models.CharField(max_length=20, choices=Scope.choices))
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(scopes__len__gte=1)
                & models.Q(scopes__contained_by=["ingest", "freeze-check", "read", "full", "alerts"]),
                name="apitoken_known_scopes",
            ),
        ]
        indexes = [
            # Serves "my tokens", newest first (the tokens page and GET /api/v1/tokens/).
            models.Index(fields=["user", "-created_at"], name="apitoken_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def status(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= timezone.now():
            return "expired"
        return "active"
