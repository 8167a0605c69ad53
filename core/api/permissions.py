"""Who may write through the API, decided before the request body is read.

Each app's api.py keeps one table, WRITE_RULES, from action to the roles (core.roles) that may take
it; each write view names its rule in `write_rule`. `RoleRequired` runs in DRF's `initial()`, before
anything touches `request.data`, so a caller who may not act gets 403 whatever they send, and never
learns from field errors what a valid body looks like. Anonymous callers get 401; any signed-in user
reads. Rules that depend on the object (only the requester submits; a component's owners approve; only
a lead of *that* program decides its gates) are asked before the body too: a rule's `scope` looks the
object up from the URL's arguments (404 when it names nothing) and asks the app's policy, or the view's
`check_permissions` asks the service. The services check again: the API is one caller of several.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from rest_framework.permissions import SAFE_METHODS, BasePermission

from core.roles import ROLE_LABELS, has_role

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User
    from rest_framework.request import Request
    from rest_framework.views import APIView

MSG_NO_RULE = "This operation declares no permission rule, so nobody may use it."


@dataclass(frozen=True)
class WriteRule:
    """`action` completes "Only a metric owner may …". No roles and no permission: anyone signed in,
    and an object-level rule decides — `scope`, or the service.

    `scope(user, url_kwargs)` is an app's policy for the object the URL names: it raises
    PermissionDenied (the refusal names the rule) or a 404, and returns None to allow."""

    action: str
    roles: tuple[str, ...] = ()
    permission: str = ""
    scope: Callable[[User | AnonymousUser, Mapping[str, Any]], None] | None = None

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


class RoleRequired(BasePermission):
    """401 for the anonymous; reads for anyone signed in; writes by the view's `write_rule`."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if not (request.user and request.user.is_authenticated):
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
        if rule.scope is not None:
            try:
                rule.scope(request.user, view.kwargs)
            except PermissionDenied as refusal:
                self.message = str(refusal)
                return False
        return True
