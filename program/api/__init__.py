"""The program API, one module per resource: programs (and their phases), gates, migrations, criteria,
bindings, the approval bar, templates, calibration and actual dates (plan); program.api.urls routes them."""

from program.api.gates import (
    CriterionOutput,
    DecisionOutput,
    GateCreateView,
    GateDecision,
    GateDetail,
    GateEvaluate,
    GateOutput,
    GateReopen,
)
from program.api.migrations import MigrationOutput, MigrationState, ProgramMigrations
from program.api.programs import (
    PhaseOutput,
    PhaseReplan,
    ProgramAdvance,
    ProgramDetail,
    ProgramDetailOutput,
    ProgramListCreate,
    ProgramOutput,
)
from program.api.rules import WRITE_RULES

__all__ = [
    "WRITE_RULES",
    "CriterionOutput",
    "DecisionOutput",
    "GateCreateView",
    "GateDecision",
    "GateDetail",
    "GateEvaluate",
    "GateOutput",
    "GateReopen",
    "MigrationOutput",
    "MigrationState",
    "PhaseOutput",
    "PhaseReplan",
    "ProgramAdvance",
    "ProgramDetail",
    "ProgramDetailOutput",
    "ProgramListCreate",
    "ProgramMigrations",
    "ProgramOutput",
]
