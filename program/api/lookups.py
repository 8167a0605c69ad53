"""The rows named in a program API path: a key or id that names none is a 404 (a key in a body is a
400 naming its field instead, through the Input serializers)."""

from __future__ import annotations

from core.errors import ApplicationError
from program import selectors
from program.models import Gate, Program


def program_or_404(slug: str) -> Program:
    """The program row alone, for writes and small reads."""
    program = Program.objects.filter(slug=slug).first()
    if program is None:
        raise ApplicationError(f"There is no program '{slug}'.", status=404)
    return program


def program_detail_or_404(slug: str) -> Program:
    """The program with its phases, gates and migrations (program.selectors.programs.program_get)."""
    try:
        return selectors.program_get(slug)
    except Program.DoesNotExist:
        raise ApplicationError(f"There is no program '{slug}'.", status=404) from None


def gate_detail_or_404(pk: int) -> Gate:
    """The gate with its criteria, latest results and decisions (program.selectors.programs.gate_get)."""
    try:
        return selectors.gate_get(pk)
    except Gate.DoesNotExist:
        raise ApplicationError(f"There is no gate {pk}.", status=404) from None
