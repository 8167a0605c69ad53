"""Every write and state change of the program app."""

from program.services.approval_bar import program_set_approval_bar
from program.services.bindings import program_bind
from program.services.criteria import (
    criterion_add,
    criterion_attest,
    criterion_delete,
    criterion_edit,
    gate_repin,
)
from program.services.gate_queue import (
    gate_evaluate_queued,
    gate_evaluation_queue,
    gates_evaluate_for_definitions,
    gates_mark_stale_queue,
)
from program.services.gate_triggers import gates_reevaluate_for_metric_keys
from program.services.gates import (
    gate_add,
    gate_decide,
    gate_evaluate,
    gate_reopen,
    gates_mark_stale,
)
from program.services.migrations import migration_set_state, migration_upsert
from program.services.phases import phase_backfill_dates
from program.services.plan_shift import advance_preview, plan_shift_preview
from program.services.programs import phase_replan, program_advance, program_create, programs_start_due

__all__ = [
    "advance_preview",
    "criterion_add",
    "criterion_attest",
    "criterion_delete",
    "criterion_edit",
    "gate_add",
    "gate_decide",
    "gate_evaluate",
    "gate_evaluate_queued",
    "gate_evaluation_queue",
    "gate_reopen",
    "gate_repin",
    "gates_evaluate_for_definitions",
    "gates_mark_stale",
    "gates_mark_stale_queue",
    "gates_reevaluate_for_metric_keys",
    "migration_set_state",
    "migration_upsert",
    "phase_backfill_dates",
    "phase_replan",
    "plan_shift_preview",
    "program_advance",
    "program_bind",
    "program_create",
    "program_set_approval_bar",
    "programs_start_due",
]
