"""Page guards: who may open a form or post to it, checked before any input is read."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied

from core.roles import ROLE_LABELS, has_role


def role_refusal(groups: tuple[str, ...], action: str) -> str:
    """'Only a program lead or a metric owner may evaluate gates.' — the 403 page shows it."""
    names = " or ".join(f"a {ROLE_LABELS.get(group, group)}" for group in groups)
    return f"Only {names} may {action}."


def require_any_role(user: User | AnonymousUser, groups: tuple[str, ...], action: str) -> None:
    if not any(has_role(user, group) for group in groups):
        raise PermissionDenied(role_refusal(groups, action))


def role_required(*groups: str, action: str) -> Callable:
    """A view only these roles may use, for GET and POST alike: nobody else sees the form."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def guarded(request, *args, **kwargs):
            require_any_role(request.user, groups, action)
            return view(request, *args, **kwargs)

        return guarded

    return decorator
