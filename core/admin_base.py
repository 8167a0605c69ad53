"""What the Django admin may do: read everything; write only through the services.

Stateful models get `ReadOnlyAdmin` (their state changes are admin actions that call a service, via
`run_service_action`). A model whose edit is worth having in the admin gets `ServiceSaveAdmin`, which
hands the form's data to its service and shows the service's refusal on the form.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from django.contrib import admin, messages
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.db import transaction
from django.db.models import Model, ProtectedError, RestrictedError
from django.forms import ModelForm
from django.http import HttpRequest

from core.errors import ApplicationError

# What a service (or the database's PROTECT) says when it refuses; shown to the admin user, never a 500.
REFUSALS = (ApplicationError, PermissionDenied, ProtectedError, RestrictedError)

if TYPE_CHECKING:
    # Generic in django-stubs only: at run time these classes cannot be subscripted. Any model: each
    # subclass names its own.
    _ModelAdmin = admin.ModelAdmin[Any]
    _TabularInline = admin.TabularInline[Any, Any]
    _ModelForm = ModelForm[Any]
else:
    _ModelAdmin = admin.ModelAdmin
    _TabularInline = admin.TabularInline
    _ModelForm = ModelForm


def refusal_text(exc: Exception) -> str:
    if isinstance(exc, ProtectedError | RestrictedError):
        return "It is still referred to by other records, so it cannot be deleted."
    return str(exc) or "Refused."


class NoWrites:
    """Admin permissions that refuse every write, for admins and inlines alike."""

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class ReadOnlyAdmin(NoWrites, _ModelAdmin):
    """Browse only: no add, change or delete. State changes are actions that call a service."""


class ReadOnlyTabularInline(NoWrites, _TabularInline):
    """Children shown on their parent's page, never written there."""

    extra = 0
    can_delete = False
    show_change_link = False


class ServiceSaveForm(_ModelForm):
    """The add/change form of a `ServiceSaveAdmin`: its last validation step saves through the service."""

    # Set by ServiceSaveAdmin.get_form on the form class it builds for one request (a new class each time).
    save_through_service: ClassVar[Callable[[ModelForm[Any]], Model]]

    def full_clean(self) -> None:
        super().full_clean()
        if not self.is_bound or self.errors:
            return
        try:
            with transaction.atomic():
                self.instance = type(self).save_through_service(self)
        except REFUSALS as exc:
            _refusal_to_form(self, exc)


class ServiceSaveAdmin(_ModelAdmin):
    """An admin whose add/change form saves through a service, never through `Model.save()`.

    Django's admin has no hook between "the form is valid" and "saved" that can still put errors on the
    form, so the service runs as the form's last validation step, inside the admin's transaction (in a
    savepoint of its own). A refusal becomes form errors (its fields where the form has them) and
    nothing is written; on success `save_model` has nothing left to do. Deleting stays off unless a
    subclass routes it through a service too.
    """

    form = ServiceSaveForm

    def service_save(self, request: HttpRequest, form: ModelForm[Any], change: bool) -> Model:
        """Call the service with the form's cleaned data and return the saved object."""
        raise NotImplementedError

    def get_form(
        self, request: HttpRequest, obj: Model | None = None, change: bool = False, **kwargs: Any
    ) -> type[ModelForm[Any]]:
        form = super().get_form(request, obj, change=change, **kwargs)
        if not issubclass(form, ServiceSaveForm):
            raise ImproperlyConfigured(f"{type(self).__name__}.form must be a ServiceSaveForm")
        form.save_through_service = partial(self.service_save, request, change=change)
        return form

    def save_model(self, request: HttpRequest, obj: Model, form: ModelForm[Any], change: bool) -> None:
        """The service saved the object while the form was validated."""

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


def _refusal_to_form(form: ModelForm[Any], exc: Exception) -> None:
    form.add_error(None, refusal_text(exc))
    for error in getattr(exc, "errors", ()):
        field = error.get("field")
        if field in form.fields and field not in form.errors:
            form.add_error(field, error.get("message", ""))


def changed_values(form: ModelForm[Any], allowed: Iterable[str]) -> dict[str, Any]:
    """The fields the admin user changed, limited to those the service accepts."""
    allowed = set(allowed)
    return {name: form.cleaned_data[name] for name in form.changed_data if name in allowed}


def run_service_action(
    model_admin: admin.ModelAdmin[Any],
    request: HttpRequest,
    objects: Iterable[Model],
    call: Callable[[Model], object],
    done: str,
) -> None:
    """Call a service once per selected object; each refusal becomes an error message, not a 500.

    `done` is formatted with `count`, the number of objects the service accepted."""
    count = 0
    for obj in objects:
        try:
            with transaction.atomic():
                call(obj)
        except REFUSALS as exc:
            model_admin.message_user(request, f"{obj}: {refusal_text(exc)}", messages.ERROR)
        else:
            count += 1
    if count:
        model_admin.message_user(request, done.format(count=count), messages.SUCCESS)
