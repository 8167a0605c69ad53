"""Hooks the freeze app listens to; program never imports freeze (docs/architecture.md, "The apps
and their arrows")."""

from django.dispatch import Signal

# Sent inside the transaction (receivers write outbox messages): program_id. Freeze gives the
# frontier phase its default window.
program_created = Signal()
# Sent inside the transaction: phase_id, cause ("re-planned", "started", "completed", "dates
# backfilled"). Windows that follow the phase move with its planned or actual dates.
phase_dates_changed = Signal()
# Sent outside any write, for the advance preview: phases (unsaved copies with their planned dates as a
# plan shift would move them). Each receiver returns a list of program.services.plan_shift.PlanMove
# describing what it would move with them (freeze: the windows that follow those phases).
plan_shift_previewed = Signal()
