"""Page guards of the program app: the program a URL names is looked up (404 when it names nothing,
or a private program the user may not read), then program.policies is asked, before any input is
read. The refusal is the styled 403 page naming the rule."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from django.contrib.auth.models import AnonymousUser, User
from django.http import Http404, HttpRequest, HttpResponseBase

from program import policies, selectors
from program.models import Program

_P = ParamSpec("_P")
_R = TypeVar("_R", bound=HttpResponseBase)
Check = Callable[[User | AnonymousUser, Program], None]


def page_program(kind: str, value: object, user: User | AnonymousUser) -> Program:
    program = selectors.program_of(kind, value)
    if program is None or not policies.may_read(user, program):
        raise Http404(f"No {kind} {value}.")
    return program


def program_guard(
    kind: str, check: Check, key: str = "pk"
) -> Callable[[Callable[Concatenate[HttpRequest, _P], _R]], Callable[Concatenate[HttpRequest, _P], _R]]:
    """A view whose URL argument `key` names a `kind` of row; `check(user, program)` refuses."""

    def decorator(
        view: Callable[Concatenate[HttpRequest, _P], _R],
    ) -> Callable[Concatenate[HttpRequest, _P], _R]:
        @wraps(view)
        def guarded(request: HttpRequest, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            check(request.user, page_program(kind, cast(dict[str, Any], kwargs)[key], request.user))
            return view(request, *args, **kwargs)

        return cast("Callable[Concatenate[HttpRequest, _P], _R]", guarded)

    return decorator


def lead_required(
    kind: str, action: str, key: str = "pk"
) -> Callable[[Callable[Concatenate[HttpRequest, _P], _R]], Callable[Concatenate[HttpRequest, _P], _R]]:
    """Only a lead of the program (or a platform admin) opens or posts this form."""

    def check(user: User | AnonymousUser, program: Program) -> None:
        policies.require_lead(user, program, action)

    return program_guard(kind, check, key)
