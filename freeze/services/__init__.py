"""Every write and state change of the freeze app."""

from freeze.services.exception_edits import ExceptionChanges, exception_create, exception_edit
from freeze.services.exception_workflow import (
    exception_act,
    exception_approve,
    exception_reject,
    exception_revoke,
    exception_submit,
    exception_withdraw,
    exceptions_expire,
    exceptions_warn_expiring,
)
from freeze.services.levels import (
    component_upsert,
    freeze_levels_export,
    freeze_levels_import,
    freeze_levels_set,
    window_create,
    window_for_frontier,
    windows_follow_phase,
    windows_follow_preview,
)
from freeze.services.overrides import (
    override_open,
    override_review,
    override_reviewer_check,
    overrides_warn_overdue,
)

__all__ = [
    "ExceptionChanges",
    "component_upsert",
    "exception_act",
    "exception_approve",
    "exception_create",
    "exception_edit",
    "exception_reject",
    "exception_revoke",
    "exception_submit",
    "exception_withdraw",
    "exceptions_expire",
    "exceptions_warn_expiring",
    "freeze_levels_export",
    "freeze_levels_import",
    "freeze_levels_set",
    "override_open",
    "override_review",
    "override_reviewer_check",
    "overrides_warn_overdue",
    "window_create",
    "window_for_frontier",
    "windows_follow_phase",
    "windows_follow_preview",
]
