"""Who may do what in core, each rule written once and asked by the services, pages and API alike."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import Http404

from core.programs import programs_hidden, programs_led
from core.roles import PLATFORM_ADMINS, has_role

MSG_WEBHOOKS = "Only a program lead or a platform admin may manage webhook endpoints."
MSG_WEBHOOKS_EVERY = "Only a platform admin may manage webhook endpoints for every program."
MSG_WEBHOOKS_PROGRAM = (
    "Only a lead of program '{program}' or a platform admin may manage its webhook endpoints."
)


def is_platform_admin(user: User | AnonymousUser) -> bool:
    return bool(
        user.is_authenticated and user.is_active and (user.is_superuser or has_role(user, PLATFORM_ADMINS))
    )


def may_manage_webhooks(user: User | AnonymousUser, program_key: str) -> bool:
    """Whether `user` may create, edit, deactivate or delete the webhook endpoints scoped to `program_key`
    (blank: the endpoints that hear every program). Platform admins manage all; a program lead only
    endpoints scoped to a program, never the organisation-wide ones.

    The one place this rule lives: every other webhook check below is built on it. "Lead of the
    program" is program membership (program.policies, asked through core.programs)."""
    if is_platform_admin(user):
        return True
    return bool(program_key) and user.is_authenticated and program_key in programs_led(user)


def webhook_scopes(user: User | AnonymousUser, program_keys: Iterable[str]) -> list[str]:
    """The scopes ("" = every program, then program keys) whose endpoints `user` may manage."""
    return [key for key in ("", *program_keys) if may_manage_webhooks(user, key)]


def webhook_endpoint_visible(user: User | AnonymousUser, program_key: str) -> None:
    """An endpoint scoped to a private program the user may not read does not exist for them (404),
    as the program itself does not; any other endpoint they may not manage is a 403 naming the rule."""
    if program_key and program_key in programs_hidden(user):
        raise Http404("No such webhook endpoint.")


def webhook_scope_check(user: User | AnonymousUser, program_key: str) -> None:
    if not may_manage_webhooks(user, program_key):
        if program_key:
            raise PermissionDenied(MSG_WEBHOOKS_PROGRAM.format(program=program_key))
        raise PermissionDenied(MSG_WEBHOOKS_EVERY)
