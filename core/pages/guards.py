"""Page guards: who may open a form or post to it, checked before any input is read."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Concatenate, ParamSpec, TypeVar, cast

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBase

from core.roles import ROLE_LABELS, has_role

_P = ParamSpec("_P")
_R = TypeVar("_R", bound=HttpResponseBase)


def role_refusal(groups: tuple[str, ...], action: str) -> str:
    """'Only a program lead or a metric owner may evaluate gates.' — the 403 page shows it."""
    names = " or ".join(f"a {ROLE_LABELS.get(group, group)}" for group in groups)
    return f"Only {names} may {action}."


def require_any_role(user: User | AnonymousUser, groups: tuple[str, ...], action: str) -> None:
    if not any(has_role(user, group) for group in groups):
        raise PermissionDenied(role_refusal(groups, action))


def role_required(
    *groups: str, action: str
) -> Callable[[Callable[Concatenate[HttpRequest, _P], _R]], Callable[Concatenate[HttpRequest, _P], _R]]:
    """A view only these roles may use, for GET and POST alike: nobody else sees the form."""

    def decorator(
        view: Callable[Concatenate[HttpRequest, _P], _R],
    ) -> Callable[Concatenate[HttpRequest, _P], _R]:
        @wraps(view)
        def guarded(request: HttpRequest, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            require_any_role(request.user, groups, action)
            return view(request, *args, **kwargs)

        # functools.wraps answers its own _Wrapped type, which mypy does not match to this Callable.
        return cast("Callable[Concatenate[HttpRequest, _P], _R]", guarded)

    return decorator
