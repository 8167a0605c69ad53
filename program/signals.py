"""Hooks the freeze app listens to; program never imports freeze (DESIGN.md §1)."""

from django.dispatch import Signal

# Sent inside the transaction (receivers write outbox messages): program_id. Freeze gives the
# frontier phase its default window.
program_created = Signal()
# Sent inside the transaction: phase_id. Windows that follow the phase move with it.
phase_replanned = Signal()
