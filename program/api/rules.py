"""Who may write, per action of the program API: refused with 403 before the body is read
(core.api.permissions)."""

from __future__ import annotations

from core.api.permissions import WriteRule
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS
from program.services.gates import EVALUATE_ROLES

WRITE_RULES = {
    "program_create": WriteRule("create programs", (PROGRAM_LEADS,)),
    "program_advance": WriteRule("advance phases", (PROGRAM_LEADS,)),
    "phase_replan": WriteRule("re-plan phases", (PROGRAM_LEADS,)),
    "phase_backfill_dates": WriteRule("backfill phase dates", (PROGRAM_LEADS,)),
    "gate_add": WriteRule("add gates", (PROGRAM_LEADS,)),
    "gate_evaluate": WriteRule("evaluate gates", EVALUATE_ROLES),
    "gate_decide": WriteRule("decide gates", (PROGRAM_LEADS,)),
    "gate_reopen": WriteRule("reopen gates", (PROGRAM_LEADS,)),
    "criterion_add": WriteRule("add criteria", (PROGRAM_LEADS,)),
    "criterion_attest": WriteRule("attest checklist items", (PROGRAM_LEADS,)),
    "criterion_edit": WriteRule("edit criteria", (PROGRAM_LEADS,)),
    "criterion_delete": WriteRule("delete criteria", (PROGRAM_LEADS,)),
    "gate_repin": WriteRule("re-pin criteria", (PROGRAM_LEADS,)),
    "migration_record": WriteRule("record migrations", (PROGRAM_LEADS, FRAMEWORK_ENGINEERS)),
}
