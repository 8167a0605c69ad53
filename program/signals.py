"""Hooks the freeze app listens to; program never imports freeze (DESIGN.md §1)."""

from django.dispatch import Signal

# Sent after commit: program_id. Freeze gives the frontier phase its default window.
program_created = Signal()
# Sent after commit: phase_id. Windows that follow the phase move with it.
phase_replanned = Signal()
