"""Reads of a program's members."""

from __future__ import annotations

from django.db.models import Case, IntegerField, QuerySet, Value, When

from program.models import Program, ProgramMembership


def program_members(program: Program) -> QuerySet[ProgramMembership]:
    """Leads first, then engineers and viewers; users before groups; one query."""
    return (
        ProgramMembership.objects.filter(program=program)
        .select_related("user", "group", "granted_by")
        .annotate(
            rank=Case(
                *(When(role=role, then=Value(i)) for i, role in enumerate(ProgramMembership.Role.values)),
                output_field=IntegerField(),
            )
        )
        .order_by("rank", "group__name", "user__username", "pk")
    )
