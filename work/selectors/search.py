"""Search: one box over programs, gates, metrics, components, freeze exceptions and incidents.

Each kind is one query (and one count when its first page is full), whatever the number of hits, so
the results page runs a fixed number of queries. What a user may read is not decided here: programs
and gates follow program.policies.readable_filter, the rule the programs list uses, and exceptions
follow freeze.policies.exceptions_readable, built on the same rule; a private program, and what is
filed under it, never shows to someone who may not read it. Metrics, components and incidents belong
to no program and are read by everyone signed in, as on their own lists.

Matching: every word of the query must appear (case-insensitively) in one of the kind's fields; a
number, or "#12", also finds the gate, exception or incident with that id."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Case, IntegerField, Model, OuterRef, Q, QuerySet, Subquery, Value, When
from django.urls import reverse

from freeze import policies as freeze_policies
from freeze.models import Component, FreezeException
from incidents.models import Incident
from metrics.models import MetricDefinition
from program import policies as program_policies
from program.models import Gate, Program

AnyUser = User | AnonymousUser

# Hits shown per kind on the grouped page, and when one kind is asked for alone.
SHOWN = 5
SHOWN_ONE_KIND = 50
# Fewer characters than this match nearly everything: the page asks for more instead.
MIN_QUERY = 2
MAX_QUERY = 100


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    context: str
    status: str = ""  # also the badge's CSS class
    status_label: str = ""  # the badge's words, when they differ from `status`


@dataclass(frozen=True)
class Group:
    kind: str
    label: str
    hits: list[Hit]
    total: int

    @property
    def more(self) -> int:
        return self.total - len(self.hits)


def _words_match(query: str, fields: Sequence[str], *, with_id: bool = False) -> Q:
    """Every word in one of `fields`; with `with_id`, a word that is a number may also be the row's id."""
    match = Q()
    for word in query.split():
        either = Q()
        for field in fields:
            either |= Q(**{f"{field}__icontains": word})
        number = word.removeprefix("#")
        if with_id and number.isdigit() and len(number) < 10:
            either |= Q(pk=int(number))
        match &= either
    return match


def _programs(user: AnyUser, query: str) -> QuerySet[Program]:
    return (
        Program.objects.filter(program_policies.readable_filter(user))
        .filter(_words_match(query, ("slug", "name", "description")))
        .select_related("lead")
        .order_by("name")
    )


def _program_hit(program: Program) -> Hit:
    lead = program.lead.get_full_name() or program.lead.username
    private = " · private" if program.is_private else ""
    return Hit(
        program.name,
        reverse("program:detail", args=[program.slug]),
        f"{program.slug} · lead {lead}{private}",
        program.status,
        program.get_status_display().lower(),
    )


def _gates(user: AnyUser, query: str) -> QuerySet[Gate]:
    return (
        Gate.objects.filter(program_policies.readable_filter(user, "phase__program"))
        .filter(_words_match(query, ("name",), with_id=True))
        .select_related("phase__program")
        .order_by("due_date", "pk")
    )


def _gate_hit(gate: Gate) -> Hit:
    return Hit(
        gate.name,
        reverse("program:gate", args=[gate.pk]),
        f"{gate.phase.program.name} · {gate.phase.name} · due {gate.due_date:%-d %b %Y}",
        gate.status,
    )


def _metrics(user: AnyUser, query: str) -> QuerySet[MetricDefinition]:
    # One row per metric key: its active version, else its newest, as the metric's page shows.
    best_version = (
        MetricDefinition.objects.filter(key=OuterRef("key"))
        .annotate(
            inactive=Case(
                When(status=MetricDefinition.Status.ACTIVE, then=Value(0)),
                default=Value(1),
                output_field=IntegerField(),
            )
        )
        .order_by("inactive", "-version")
        .values("pk")[:1]
    )
    return (
        MetricDefinition.objects.filter(pk=Subquery(best_version))
        .filter(_words_match(query, ("key", "name")))
        .order_by("key")
    )


def _metric_hit(definition: MetricDefinition) -> Hit:
    # The bare key opens the same version (the active one, else the newest).
    return Hit(
        definition.name,
        reverse("metrics:detail", args=[definition.key]),
        f"{definition.key}@{definition.version} · {definition.unit} · {definition.owner_team}",
        definition.status,
    )


def _components(user: AnyUser, query: str) -> QuerySet[Component]:
    return Component.objects.filter(_words_match(query, ("key", "name", "owner_team"))).order_by("key")


def _component_hit(component: Component) -> Hit:
    return Hit(
        component.name,
        reverse("freeze:component", args=[component.key]),
        f"{component.key} · {component.get_layer_display()} · owned by {component.owner_team}",
    )


def _exceptions(user: AnyUser, query: str) -> QuerySet[FreezeException]:
    return (
        FreezeException.objects.filter(freeze_policies.exceptions_readable(user))
        .filter(_words_match(query, ("title", "component__key", "component__name"), with_id=True))
        .select_related("component", "window__program")
        .order_by("-pk")
    )


def _exception_hit(exception: FreezeException) -> Hit:
    return Hit(
        f"#{exception.pk} {exception.title}",
        reverse("freeze:exception", args=[exception.pk]),
        f"{exception.component.key} · {exception.window.name} ({exception.window.program.name})"
        f" · {exception.risk} risk",
        exception.status,
    )


def _incidents(user: AnyUser, query: str) -> QuerySet[Incident]:
    fields = ("title", "component__key", "system__key", "bug_class__name")
    return (
        Incident.objects.filter(_words_match(query, fields, with_id=True))
        .select_related("component", "system", "bug_class")
        .order_by("-opened_at", "-pk")
    )


def _incident_hit(incident: Incident) -> Hit:
    return Hit(
        f"#{incident.pk} {incident.title}",
        reverse("incidents:detail", args=[incident.pk]),
        f"{incident.severity} · {incident.system.key} · {incident.component.key} · "
        f"opened {incident.opened_at:%-d %b %Y}",
        incident.state,
    )


@dataclass(frozen=True)
class Kind:
    label: str
    rows: Callable[[AnyUser, str], QuerySet[Any]]
    hit: Callable[[Any], Hit]


# In the order the page shows them; the keys are the page's `kind` values.
KINDS: dict[str, Kind] = {
    "programs": Kind("Programs", _programs, _program_hit),
    "gates": Kind("Gates", _gates, _gate_hit),
    "metrics": Kind("Metrics", _metrics, _metric_hit),
    "components": Kind("Components", _components, _component_hit),
    "exceptions": Kind("Freeze exceptions", _exceptions, _exception_hit),
    "incidents": Kind("Incidents", _incidents, _incident_hit),
}


def _group(key: str, kind: Kind, user: AnyUser, query: str, shown: int) -> Group:
    rows: QuerySet[Model] = kind.rows(user, query)
    found = list(rows[:shown])
    total = len(found) if len(found) < shown else rows.count()
    return Group(key, kind.label, [kind.hit(row) for row in found], total)


def search(user: AnyUser, query: str, *, kind: str = "") -> list[Group]:
    """The hits for `query` by kind (only `kind`'s, if given), each group with its total count.
    At most two queries per kind, plus the one that reads the user's program memberships."""
    query = query.strip()
    if len(query) < MIN_QUERY:
        return []
    if kind:
        return [_group(kind, KINDS[kind], user, query, SHOWN_ONE_KIND)]
    return [_group(key, spec, user, query, SHOWN) for key, spec in KINDS.items()]
