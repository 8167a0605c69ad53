"""Who may write, per action of the program API: refused with 403 before the body is read
(core.api.permissions). Each rule asks program.policies about the program the URL names; the
services ask the same policy again."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.contrib.auth.models import AnonymousUser, User

from core.api.permissions import WriteRule
from program import policies
from program.api.lookups import program_named_by
from program.models import Program

AnyUser = User | AnonymousUser


def lead_of(kind: str, action: str, key: str = "pk") -> WriteRule:
    """A lead of the program that the URL's `key` (a `kind` of row) belongs to, or a platform admin."""

    def object_rule(user: AnyUser, kwargs: Mapping[str, Any]) -> None:
        program = program_named_by(kind, kwargs[key], user)
        if program is not None:
            policies.require_lead(user, program, action)

    return WriteRule(action, object_rule=object_rule)


def _asking(check: Callable[[AnyUser, Program], None], kind: str, key: str = "pk") -> Any:
    def object_rule(user: AnyUser, kwargs: Mapping[str, Any]) -> None:
        program = program_named_by(kind, kwargs[key], user)
        if program is not None:
            check(user, program)

    return object_rule


def _create_programs(user: AnyUser, kwargs: Mapping[str, Any]) -> None:
    policies.require_create_programs(user)


def _lead_anywhere(action: str) -> Callable[[AnyUser, Mapping[str, Any]], None]:
    def object_rule(user: AnyUser, kwargs: Mapping[str, Any]) -> None:
        policies.require_lead_anywhere(user, action)

    return object_rule


WRITE_RULES = {
    "program_create": WriteRule("create programs", object_rule=_create_programs),
    "program_advance": lead_of("program", "advance phases", key="slug"),
    "program_bind": lead_of("program", "bind template slots", key="slug"),
    "program_set_approval_bar": lead_of("program", "set the approval bar", key="slug"),
    "membership_write": lead_of("program", "manage its members", key="slug"),
    "phase_replan": lead_of("phase", "re-plan phases"),
    "phase_backfill_dates": lead_of("phase", "backfill phase dates"),
    # The phase, and so the program, is in the body: leading no program is refused here, a lead of
    # another program by the service.
    "gate_add": WriteRule("add gates", object_rule=_lead_anywhere("add gates")),
    "gate_evaluate": WriteRule("evaluate gates", object_rule=_asking(policies.require_evaluate, "gate")),
    "gate_decide": lead_of("gate", "decide gates"),
    "gate_reopen": lead_of("gate", "reopen gates"),
    "criterion_add": lead_of("gate", "add criteria"),
    "criterion_attest": lead_of("criterion", "attest checklist items"),
    "criterion_edit": lead_of("criterion", "edit criteria"),
    "criterion_delete": lead_of("criterion", "delete criteria"),
    "gate_repin": lead_of("gate", "re-pin criteria"),
    "migration_record": WriteRule(
        "record migrations", object_rule=_asking(policies.require_record_migrations, "program", key="slug")
    ),
    "migration_state": WriteRule(
        "record migrations", object_rule=_asking(policies.require_record_migrations, "migration")
    ),
}
