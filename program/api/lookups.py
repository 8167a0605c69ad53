"""The rows named in a program API path: a key or id that names none is a 404 (a key in a body is a
400 naming its field instead, through the Input serializers)."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

from core.errors import ApplicationError
from program import policies, selectors
from program.models import Gate, Program


def program_or_404(slug: str) -> Program:
    """The program row alone, for writes and small reads."""
    program = Program.objects.filter(slug=slug).first()
    if program is None:
        raise ApplicationError(f"There is no program '{slug}'.", status=404)
    return program


def program_readable_or_404(slug: str, user: User | AnonymousUser) -> Program:
    """The program row alone, if this user may read it (a private program is a 404 to others)."""
    program = program_or_404(slug)
    policies.require_read(user, program)
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


def program_named_by(kind: str, value: object, user: User | AnonymousUser) -> Program | None:
    """The program a URL's slug, phase, gate, criterion or migration id belongs to, in one query
    (program.selectors.program_of); None when it names nothing (the view answers the 404, after an
    idempotent repeat of a delete is replayed); a 404 for a private program the user may not read."""
    program = selectors.program_of(kind, value)
    if program is None:
        return None
    if not policies.may_read(user, program):
        what = f"program '{value}'" if kind == "program" else f"{kind} {value}"
        raise ApplicationError(f"There is no {what}.", status=404)
    return program
