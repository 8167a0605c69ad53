from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.timesince import timesince
from django.views.decorators.http import require_GET, require_POST

from core.charts import compare_bars, interval_chart
from core.errors import ApplicationError
from core.models import Transition
from core.numbers import effect, effect_range
from core.pages.form_submit import form_submit
from core.pages.htmx import HtmxHttpRequest
from core.roles import acting_user
from metrics.public import METHODS, comparison_sentence, method_meaning, tag_filters_text
from program import policies, selectors, services
from program.criteria_history import criteria_change_sentence
from program.criterion_words import requirement_text
from program.gate_extensions import gate_panels
from program.history import program_history
from program.models import Criterion, CriterionResult, Decision, Gate, Phase, Program, WorkloadMigration
from program.pages.approval_bar import ApprovalBarForm
from program.pages.criteria_forms import CriterionForm, criterion_choices, edit_form
from program.pages.guards import lead_required, program_guard
from program.pages.programs_forms import DecisionForm, ProgramForm, ReopenForm
from program.services.gate_triggers import REEVALUATION_REQUESTED
from program.shadows import criteria_shadows
from program.timeline_svg import timeline_svg
from program.verdict import Counted, DecisionFacts, Verdict, gate_verdict
from program.versions import active_of, current_versions, stale_moves


@require_GET
def program_list(request: HttpRequest) -> HttpResponse:
    programs = selectors.programs_list().filter(policies.readable_filter(request.user))
    context = {"programs": programs, "may_create_programs": policies.may_create_programs(request.user)}
    return render(request, "program/program_list.html", context)


def program_new(request: HttpRequest) -> HttpResponse:
    policies.require_create_programs(request.user)
    form = ProgramForm(
        request.POST or None,
        initial={"baseline": "legacy", "candidate": "rebuilt", "template": "rebuild-14m"},
        template=(request.POST or request.GET).get("template", "rebuild-14m"),
    )
    status = 200
    if request.method == "POST":
        sent = form_submit(
            form, lambda _: services.program_create(actor=acting_user(request), **form.service_kwargs())
        )
        if sent.ok:
            program = sent.value
            messages.success(request, f"Created {program.name} from {program.template}.")
            return redirect("program:detail", slug=program.slug)
        status = sent.status
    return render(request, "program/program_form.html", {"form": form}, status=status)


@require_GET
def program_detail(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        program = selectors.program_get(slug)
    except Program.DoesNotExist:
        raise Http404(f"No program '{slug}'.") from None
    if not policies.may_read(request.user, program):
        raise Http404(f"No program '{slug}'.")
    timeline = selectors.program_timeline(program)
    phases = list(program.phases.all())
    current = next((p for p in phases if p.status == Phase.Status.ACTIVE), None)
    waves: dict[int, list[WorkloadMigration]] = {}
    for migration in program.migrations.all():
        waves.setdefault(migration.wave, []).append(migration)
    return render(
        request,
        "program/program_detail.html",
        {
            "program": program,
            "timeline": timeline,
            "timeline_svg": timeline_svg(timeline),
            "phases": phases,
            "current": current,
            "waves": sorted(waves.items()),
            "history": program_history(program),
            "can_record_migrations": policies.may_record_migrations(request.user, program.pk),
            "can_lead": policies.is_lead(request.user, program.pk),
            "can_set_approval_bar": policies.is_lead(request.user, program.pk),
            "can_manage_members": policies.may_manage_members(request.user, program.pk),
            "approval_bar_form": ApprovalBarForm(initial={"approval_bar_weeks": program.approval_bar_weeks}),
        },
    )


def every_metric_rows(result: CriterionResult) -> list[dict[str, Any]]:
    """An every-metric result's metrics, failing and inconclusive first, each with its method's words."""
    order = {CriterionResult.Outcome.FAIL: 0, CriterionResult.Outcome.INCONCLUSIVE: 1}
    rows = sorted(result.evidence.get("metrics", []), key=lambda row: order.get(row["outcome"], 2))
    return [{**row, "method_text": METHODS.get(row.get("method", ""), "")} for row in rows]


def every_metric_summary(result: CriterionResult) -> str:
    """An every-metric result in the words effects are said in: how many metrics hold, which do not,
    and the deciding (closest) metric's effect; the ratios stay in the folded table."""
    evidence = result.evidence
    rows = evidence.get("metrics") or []
    if not rows:
        return str(result.reason)
    counts = evidence.get("counts") or {}
    text = f"{counts.get('pass', 0)} of {len(rows)} metrics at least as good"
    for outcome, label in (("fail", "worse"), ("inconclusive", "inconclusive")):
        names = [row["metric"] for row in rows if row["outcome"] == outcome]
        if names:
            text += f"; {label}: {', '.join(names)}"
    deciding = next((row for row in rows if row["metric"] == evidence.get("deciding_metric")), None)
    if deciding is not None and deciding.get("relative_performance") is not None:
        text += f" · closest, {deciding['metric']}: {effect(deciding['relative_performance'])}"
        if deciding.get("relative_performance_ci"):
            text += f" ({effect_range(deciding['relative_performance_ci'])})"
    return text


def _evidence_views(criterion: Criterion, result: CriterionResult) -> dict[str, Any]:
    """The evidence of one measured criterion as the page shows it: the sentence, each side's bar with
    its interval (an absolute threshold as a line there), and the judged estimate's interval against
    a relative or improvement threshold. Older evidence without intervals still renders."""
    evidence = result.evidence
    statistic = evidence["statistic"]
    base, cand = evidence["baseline"], evidence["candidate"]
    absolute = criterion.kind == Criterion.Kind.ABSOLUTE
    views = {
        "chart": compare_bars(
            [(statistic, base["value"], cand["value"])],
            labels=(base["system"], cand["system"]),
            intervals={statistic: (base.get("ci"), cand.get("ci"))},
            threshold=criterion.threshold if absolute else None,
        ),
        "sentence": comparison_sentence(
            statistic=statistic,
            direction=evidence.get("direction"),
            baseline=base["value"],
            candidate=cand["value"],
        ),
        "method": METHODS.get(evidence.get("method"), ""),
        "method_meaning": method_meaning(evidence.get("method") or ""),
        "confidence": f"{(1 - evidence['alpha']) * 100:g}" if "alpha" in evidence else "",
    }
    if not absolute and result.value is not None:
        relative = criterion.kind == Criterion.Kind.RELATIVE
        views["interval_chart"] = interval_chart(
            estimate=result.value,
            ci=evidence.get("value_ci"),
            threshold=criterion.threshold,
            reference=1.0 if relative else 0.0,
            label=("relative performance" if relative else "improvement %")
            + (f", worst group ({evidence['deciding_group']})" if evidence.get("deciding_group") else ""),
        )
    return views


def _person(user: Any) -> str:
    return str(user.get_full_name() or user.get_username())


def _verdict(gate: Gate, program: Program, items: list[dict[str, Any]], standing: Decision | None) -> Verdict:
    """The page's first sentence (program.verdict). A decided gate is counted from the evidence its
    decision froze; any other from its latest evaluation."""
    frozen = standing.evidence.get("criteria") if standing is not None else None
    if frozen is not None:
        counted = [Counted(bool(c.get("required", True)), c.get("outcome")) for c in frozen]
    else:
        counted = [
            Counted(item["criterion"].required, item["result"].outcome if item["result"] else None)
            for item in items
        ]
    return gate_verdict(
        status=gate.status,
        counted=counted,
        evaluated=gate.latest_evaluation is not None,
        starts_on=program.start_date if program.status == Program.Status.NOT_STARTED else None,
        decision=DecisionFacts(standing.decision, _person(standing.decided_by), standing.decided_at)
        if standing is not None
        else None,
        phase_name=gate.phase.name,
        phase_ended=gate.phase.actual_end,
    )


def _frozen_at(standing: Decision | None) -> datetime | None:
    """When the evidence a decision froze was evaluated (older decisions may not say)."""
    raw = standing.evidence.get("evaluated_at") if standing is not None else None
    try:
        return datetime.fromisoformat(raw) if raw else None
    except ValueError:
        return None


def _evaluated_ago(gate: Gate) -> str:
    """ "just now", "12 minutes ago": not "0 minutes ago"."""
    if gate.latest_evaluation is None:
        return ""
    if timezone.now() - gate.latest_evaluation.checked_at < timedelta(minutes=1):
        return "just now"
    return f"{timesince(gate.latest_evaluation.checked_at)} ago"


def gate_context(
    request: HttpRequest,
    gate: Gate,
    form: DecisionForm | None = None,
    reopen_form: ReopenForm | None = None,
    add_form: CriterionForm | None = None,
    edit_forms: dict[int, CriterionForm] | None = None,
) -> dict[str, Any]:
    """Everything the gate page shows. A refused criterion form comes back bound (`add_form`, or
    `edit_forms` by criterion id) so it keeps what was typed and shows why."""
    program = gate.phase.program
    gate_criteria = list(gate.criteria.all())
    versions = current_versions(gate_criteria)
    shadows = criteria_shadows(program, gate_criteria, versions)
    # A completed phase's gates are history (program.services.gates.require_phase_not_completed): no
    # form for what the service would refuse.
    in_history = gate.phase.status == Phase.Status.COMPLETED
    can_decide = policies.is_lead(request.user, program.pk) and not in_history
    can_edit = can_decide and not gate.decided
    edit_forms = edit_forms or {}
    criteria = []
    for criterion in gate_criteria:
        # Prefetched by program.selectors.programs.gate_get (to_attr), which every gate page reads the gate with.
        latest: list[CriterionResult] = getattr(criterion, "latest_results", [])
        result = latest[0] if latest else None
        item: dict[str, Any] = {
            "criterion": criterion,
            "result": result,
            "shadows": shadows.get(criterion.pk, []),
        }
        item["tags_text"] = tag_filters_text(criterion.tag_filters or {})
        item["requirement"] = requirement_text(criterion)
        if result and result.evidence.get("baseline"):
            item.update(_evidence_views(criterion, result))
        if result and criterion.kind == Criterion.Kind.EVERY_METRIC:
            item["metric_rows"] = every_metric_rows(result)
            item["every_summary"] = every_metric_summary(result)
        if can_edit:
            item["edit_form"] = edit_forms.get(criterion.pk) or edit_form(criterion)
            item["edit_open"] = criterion.pk in edit_forms
        criteria.append(item)
    decisions = list(gate.decisions.all())
    standing = next((d for d in decisions if d.reopened_at is None), None) if gate.decided else None
    not_started = program.status == Program.Status.NOT_STARTED
    context = {
        "gate": gate,
        "program": program,
        "criteria": criteria,
        "verdict": _verdict(gate, program, criteria, standing),
        "standing": standing,
        "frozen_at": _frozen_at(standing),
        "evaluated_ago": _evaluated_ago(gate),
        "repin_moves": stale_moves(gate_criteria, active_of(versions)),
        "decisions": decisions,
        "history": _gate_history(gate),
        "panels": gate_panels([c.metric.key for c in gate_criteria if c.metric is not None]),
        "can_decide": can_decide,
        "in_history": in_history,
        "can_edit_criteria": can_edit,
        # A decided or closed gate keeps its frozen evidence, and no gate is ready before its program
        # starts (program.services.gates.gate_evaluate): no "Evaluate now" for either.
        "can_evaluate": policies.may_evaluate(request.user, program.pk)
        and not gate.decided
        and not in_history
        and not not_started,
        "not_started": not_started,
        "form": form or DecisionForm(),
        "reopen_form": reopen_form or ReopenForm(),
    }
    if can_edit:
        context.update(criterion_choices())
        context["add_form"] = add_form or CriterionForm(prefix="new")
    return context


@dataclass(frozen=True)
class GateHistoryLine:
    transition: Transition
    sentence: str  # blank: the page shows the action and its states


def _gate_history(gate: Gate) -> list[GateHistoryLine]:
    return [
        GateHistoryLine(
            record,
            # The reason (which exception, what happened) follows on the page.
            "queued a re-evaluation"
            if record.action == REEVALUATION_REQUESTED
            else criteria_change_sentence(record),
        )
        for record in selectors.gate_history(gate)
    ]


def _gate_or_404(pk: int) -> Gate:
    try:
        return selectors.gate_get(pk)
    except Gate.DoesNotExist:
        raise Http404(f"No gate {pk}.") from None


@require_GET
def gate_detail(request: HttpRequest, pk: int) -> HttpResponse:
    gate = _gate_or_404(pk)
    if not policies.may_read(request.user, gate.phase.program):
        raise Http404(f"No gate {pk}.")
    return render(request, "program/gate_detail.html", gate_context(request, gate))


def gate_answer(request: HttpRequest, gate: Gate, status: int = 200, **forms_: Any) -> HttpResponse:
    """After a gate action: htmx gets the panel; a plain POST that worked is redirected (so a reload
    does not post again), and one that was refused gets the whole page with its status."""
    # HtmxMiddleware sets `htmx` on every request; typed HttpRequest here, as role_required's views are.
    if not cast(HtmxHttpRequest, request).htmx and status < 400:
        return redirect("program:gate", pk=gate.pk)
    template = (
        "program/_gate_body.html" if cast(HtmxHttpRequest, request).htmx else "program/gate_detail.html"
    )
    return render(
        request, template, gate_context(request, selectors.gate_get(gate.pk), **forms_), status=status
    )


@require_POST
@lead_required("gate", "decide gates")
def gate_decide(request: HttpRequest, pk: int) -> HttpResponse:
    gate = _gate_or_404(pk)
    form = DecisionForm(request.POST)
    # Lost a race (409) or bad input (400): the form keeps the decision and note typed.
    sent = form_submit(
        form,
        lambda data: services.gate_decide(gate=gate, actor=acting_user(request), **data),
        fallback_field="decision",
    )
    if sent.ok:
        messages.success(request, f"Gate '{gate.name}' decided: {form.cleaned_data['decision']}.")
        return gate_answer(request, gate)
    return gate_answer(request, gate, sent.status, form=form)


@require_POST
@program_guard("gate", policies.require_evaluate)
def gate_evaluate(request: HttpRequest, pk: int) -> HttpResponse:
    gate = _gate_or_404(pk)
    try:
        services.gate_evaluate(gate=gate, actor=acting_user(request))
    except ApplicationError as exc:  # a closed gate, or one of a completed phase: 409, said on the page
        messages.error(request, exc.message)
        return gate_answer(request, gate, exc.status)
    messages.info(request, "Evaluated just now.")
    return gate_answer(request, gate)


@require_POST
@lead_required("gate", "reopen gates")
def gate_reopen(request: HttpRequest, pk: int) -> HttpResponse:
    gate = _gate_or_404(pk)
    form = ReopenForm(request.POST)
    sent = form_submit(
        form,
        lambda data: services.gate_reopen(gate=gate, actor=acting_user(request), reason=data["reason"]),
        fallback_field="reason",
    )
    if sent.ok:
        messages.success(request, f"Gate '{gate.name}' reopened.")
        return gate_answer(request, gate)
    return gate_answer(request, gate, sent.status, reopen_form=form)


@require_POST
@lead_required("criterion", "attest checklist items")
def criterion_attest(request: HttpRequest, pk: int) -> HttpResponse:
    criterion = get_object_or_404(Criterion.objects.select_related("gate"), pk=pk)
    try:
        services.criterion_attest(
            actor=acting_user(request), criterion=criterion, link=request.POST.get("link", "")
        )
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return gate_answer(request, criterion.gate, exc.status)
    services.gate_evaluate(gate=criterion.gate, actor=acting_user(request))
    messages.success(request, f"Attested: {criterion.name}.")
    return gate_answer(request, criterion.gate)
