"""Reads of the program app: programs, phases, gates and plans (programs), and the bindings of template slots (bindings)."""

from program.selectors.bindings import (
    SlotBinding,
    program_bindings,
)
from program.selectors.members import program_members
from program.selectors.programs import (
    GateMark,
    MonthTick,
    Timeline,
    TimelineBar,
    gate_get,
    gate_history,
    program_get,
    program_of,
    program_timeline,
    programs_list,
)

__all__ = [
    "GateMark",
    "MonthTick",
    "SlotBinding",
    "Timeline",
    "TimelineBar",
    "gate_get",
    "gate_history",
    "program_bindings",
    "program_get",
    "program_members",
    "program_of",
    "program_timeline",
    "programs_list",
]
