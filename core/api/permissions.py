"""Who may write through the API, decided before the request body is read.

Each app's api.py keeps one table, WRITE_RULES, from action to the roles (core.roles) that may take
it; each write view names its rule in `write_rule`. `RoleRequired` runs in DRF's `initial()`, before
anything touches `request.data`, so a caller who may not act gets 403 whatever they send, and never
learns from field errors what a valid body looks like. Anonymous callers get 401; any signed-in user
reads. Rules that depend on the object (only the requester submits; a component's owners approve; only
a lead of *that* program decides its gates) are asked before the body too: a rule's `object_rule` looks the
object up from the URL's arguments (404 when it names nothing) and asks the app's policy, or the view's
`check_permissions` asks the service. The services check again: the API is one caller of several.

A request made with an API token is also held to the token's scopes, here and only here
(`scope_refusal`): a view's `token_scope` names the scope it needs (per method, or for all), else safe
methods need `read` and writes `full`. `full` covers everything and `read` covers the freeze check.
Both permission classes check it — `ScopeRequired` is the default for every view, `RoleRequired`
the one write views name — so no view gets past it unless it declares `AllowAny` (signing in).
Session-authenticated callers (pages, the browser) carry no token and are not affected.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated

from core.models import ApiToken
from core.roles import ROLE_LABELS, has_role

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User
    from rest_framework.request import Request
    from rest_framework.views import APIView

MSG_NO_RULE = "This operation declares no permission rule, so nobody may use it."
MSG_SCOPE = "This operation needs a token with the `{needed}` scope; this token has: {held}."

Scope = ApiToken.Scope
# Any live token may do this (revoke itself): a leaked token's finder can only end it.
ANY_SCOPE = "any"
# Which scopes each held scope also covers, besides itself.
COVERS: dict[str, frozenset[str]] = {
    Scope.FULL: frozenset(Scope.values),
    Scope.READ: frozenset({Scope.READ, Scope.FREEZE_CHECK}),
}


def required_scope(method: str, view: APIView) -> str:
    declared: str | Mapping[str, str] | None = getattr(view, "token_scope", None)
    if isinstance(declared, Mapping):
        declared = declared.get(method)
    if declared:
        return declared
    return Scope.READ if method in SAFE_METHODS else Scope.FULL


def scope_refusal(request: Request, view: APIView) -> str | None:
    """Why this request's token may not use this view, or None (no token, or a scope that covers it)."""
    token = request.auth
    if not isinstance(token, ApiToken):
        return None
    needed = required_scope(request.method or "GET", view)
    if needed == ANY_SCOPE or any(needed in COVERS.get(held, frozenset({held})) for held in token.scopes):
        return None
    return MSG_SCOPE.format(needed=needed, held=", ".join(token.scopes))


@dataclass(frozen=True)
class WriteRule:
    """`action` completes "Only a metric owner may …". No roles and no permission: anyone signed in,
    and an object-level rule decides — `object_rule`, or the service.

    `object_rule(user, url_kwargs)` is an app's policy for the object the URL names: it raises
    PermissionDenied (the refusal names the rule) or a 404, and returns None to allow."""

    action: str
    roles: tuple[str, ...] = ()
    permission: str = ""
    object_rule: Callable[[User | AnonymousUser, Mapping[str, Any]], None] | None = None

    def allows(self, user: User | AnonymousUser) -> bool:
        if self.permission:
            return user.has_perm(self.permission)
        return not self.roles or any(has_role(user, role) for role in self.roles)

    @property
    def refusal(self) -> str:
        if self.permission:
            return f"Only users with the {self.permission} permission may {self.action}."
        who = " or ".join(f"a {ROLE_LABELS.get(role, role)}" for role in self.roles)
        return f"Only {who} may {self.action}."


class ScopeRequired(IsAuthenticated):
    """The default for every API view: signed in (401 otherwise), and within the token's scopes."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if not super().has_permission(request, view):
            return False
        refusal = scope_refusal(request, view)
        if refusal is not None:
            self.message = refusal
            return False
        return True


class RoleRequired(BasePermission):
    """401 for the anonymous; the token's scope; reads for anyone signed in; writes by `write_rule`."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        refusal = scope_refusal(request, view)
        if refusal is not None:
            self.message = refusal
            return False
        if request.method in SAFE_METHODS:
            return True
        rule: WriteRule | None = getattr(view, "write_rule", None)
        if rule is None:
            self.message = MSG_NO_RULE  # fails closed: a new write view must say who may use it
            return False
        if not rule.allows(request.user):
            self.message = rule.refusal
            return False
        if rule.object_rule is not None:
            try:
                rule.object_rule(request.user, view.kwargs)
            except PermissionDenied as refusal:
                self.message = str(refusal)
                return False
        return True
