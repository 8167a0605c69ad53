"""Webhook endpoints: created, edited, deactivated, reactivated and deleted here only (page, API and admin
call these). Each checks core.policies.may_manage_webhooks for the endpoint's program (and, when an edit
moves it, for the new one), locks the row, and writes an audit row in the same transaction.

The signing secret is made here and returned once, by the create service; nothing lists it again."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction

from core.audit import transition_record
from core.errors import ApplicationError
from core.models import WebhookEndpoint
from core.notification_kinds import event_filter_known
from core.policies import webhook_scope_check
from core.programs import program_choices, programs_hidden
from core.services.model_update import model_update
from core.webhook_bodies import Format

MSG_NAME = "Give the endpoint a name (at most 100 characters)."
MSG_URL = "Enter an http:// or https:// URL (at most 200 characters)."
MSG_PROGRAM = "Unknown program '{key}'."
MSG_EVENT = "'{name}' is neither a kind of notice nor a known event name."
MSG_INACTIVE = "Endpoint '{name}' is deactivated already."
MSG_ACTIVE = "Endpoint '{name}' is active already."
MSG_FORMAT = "Unknown format '{value}': choose standard, slack or teams."

_URL = URLValidator(schemes=["http", "https"])


class WebhookEndpointChanges(TypedDict, total=False):
    """What webhook_endpoint_update may change; a key left out keeps its value."""

    name: str
    url: str
    program_key: str
    events: list[str]
    format: str


EDITABLE = ("name", "url", "program_key", "events", "format")


@dataclass(frozen=True)
class CreatedEndpoint:
    endpoint: WebhookEndpoint
    # The signing secret in clear: shown to its creator once, with this answer.
    secret: str


def webhook_secret_new() -> str:
    """A Standard Webhooks secret: "whsec_" and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _clean(values: WebhookEndpointChanges) -> WebhookEndpointChanges:
    """Each given field checked in EDITABLE order; a bad one is a 400 naming it."""
    cleaned: WebhookEndpointChanges = {}
    if "name" in values:
        name = values["name"].strip()
        if not name or len(name) > 100:
            raise ApplicationError(MSG_NAME, status=400, field="name")
        cleaned["name"] = name
    if "url" in values:
        url = values["url"].strip()
        try:
            _URL(url)
        except ValidationError:
            raise ApplicationError(MSG_URL, status=400, field="url") from None
        if len(url) > 200:
            raise ApplicationError(MSG_URL, status=400, field="url")
        cleaned["url"] = url
    if "program_key" in values:
        cleaned["program_key"] = values["program_key"].strip()  # known: _known_program asked first
    if "events" in values:
        cleaned["events"] = _events(values["events"])
    if "format" in values:
        if values["format"] not in Format.values:
            raise ApplicationError(MSG_FORMAT.format(value=values["format"]), status=400, field="format")
        cleaned["format"] = values["format"]
    return cleaned


def _known_program(actor: User, key: str) -> str:
    """The program a body names, resolved before the rule that depends on it: an unknown key, or one
    of a private program the actor may not read, is a 400 naming `program_key`, as any unknown key."""
    key = key.strip()
    if key and (key not in {known for known, _ in program_choices()} or key in programs_hidden(actor)):
        raise ApplicationError(MSG_PROGRAM.format(key=key), status=400, field="program_key")
    return key


def _events(names: Sequence[str]) -> list[str]:
    for index, name in enumerate(names):
        if not event_filter_known(name):
            raise ApplicationError(MSG_EVENT.format(name=name), status=400, field=f"events.{index}")
    return sorted(set(names))


def webhook_endpoint_create(
    *,
    actor: User,
    name: str,
    url: str,
    program_key: str = "",
    events: Sequence[str] = (),
    format: str = Format.STANDARD,
) -> CreatedEndpoint:
    """`format` is what it is sent (core.webhook_bodies.Format); every endpoint gets a signing secret,
    which the Slack and Teams formats leave unused until it is switched to standard."""
    webhook_scope_check(actor, _known_program(actor, program_key))
    values = _clean(
        {"name": name, "url": url, "program_key": program_key, "events": list(events), "format": format}
    )
    secret = webhook_secret_new()
    with transaction.atomic():
        endpoint = WebhookEndpoint.objects.create(**values, secret=secret, is_active=True)
        transition_record(
            subject=endpoint, action="created", actor=actor, to_state="active", data=_described(endpoint)
        )
    return CreatedEndpoint(endpoint=endpoint, secret=secret)


def webhook_endpoint_update(
    *, actor: User, endpoint: WebhookEndpoint, changes: WebhookEndpointChanges
) -> list[str]:
    """Returns the names of the fields that changed; nothing changed writes nothing (no audit row)."""
    webhook_scope_check(actor, endpoint.program_key)
    if "program_key" in changes:
        # Moving an endpoint to another program needs the right to manage that one too.
        webhook_scope_check(actor, _known_program(actor, changes["program_key"]))
    cleaned: dict[str, object] = dict(_clean(changes))
    with transaction.atomic():
        endpoint = _locked(actor, endpoint)
        before = _described(endpoint)
        changed = model_update(instance=endpoint, fields=EDITABLE, data=cleaned)
        if changed:
            transition_record(
                subject=endpoint,
                action="updated",
                actor=actor,
                data={"changed": {name: [before[name], _described(endpoint)[name]] for name in changed}},
            )
    return changed


def webhook_endpoint_deactivate(*, actor: User, endpoint: WebhookEndpoint) -> WebhookEndpoint:
    """Stops deliveries of new notices (deliveries already queued still go out)."""
    return _set_active(actor, endpoint, active=False)


def webhook_endpoint_reactivate(*, actor: User, endpoint: WebhookEndpoint) -> WebhookEndpoint:
    return _set_active(actor, endpoint, active=True)


def webhook_endpoint_delete(*, actor: User, endpoint: WebhookEndpoint) -> None:
    """Deletes it and its deliveries; the audit row, which names it, stays."""
    webhook_scope_check(actor, endpoint.program_key)
    with transaction.atomic():
        endpoint = _locked(actor, endpoint)
        transition_record(
            subject=endpoint,
            action="deleted",
            actor=actor,
            from_state="active" if endpoint.is_active else "inactive",
            data=_described(endpoint),
        )
        endpoint.delete()


def _set_active(actor: User, endpoint: WebhookEndpoint, *, active: bool) -> WebhookEndpoint:
    webhook_scope_check(actor, endpoint.program_key)
    with transaction.atomic():
        endpoint = _locked(actor, endpoint)
        if endpoint.is_active == active:
            raise ApplicationError((MSG_ACTIVE if active else MSG_INACTIVE).format(name=endpoint.name))
        endpoint.is_active = active
        endpoint.save(update_fields=["is_active"])
        transition_record(
            subject=endpoint,
            action="reactivated" if active else "deactivated",
            actor=actor,
            from_state="inactive" if active else "active",
            to_state="active" if active else "inactive",
        )
    return endpoint


def _locked(actor: User, endpoint: WebhookEndpoint) -> WebhookEndpoint:
    """The row, locked; checked again, since another edit may have moved it to another program."""
    locked = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    webhook_scope_check(actor, locked.program_key)
    return locked


def _described(endpoint: WebhookEndpoint) -> dict[str, object]:
    """What the audit row keeps: a Slack or Teams URL by its host only, since its path is its secret."""
    return {
        "name": endpoint.name,
        "url": endpoint.url_listed,
        "program_key": endpoint.program_key,
        "events": list(endpoint.events),
        "format": endpoint.format,
    }
