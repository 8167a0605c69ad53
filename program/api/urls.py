from django.urls import path, re_path

from program import api
from program.api import approval_bar, bindings, calibration, criteria, members, plan, prometheus, templates

urlpatterns = [
    path("programs/", api.ProgramListCreate.as_view(), name="program-list"),
    path("programs/<slug:slug>/", api.ProgramDetail.as_view(), name="program-detail"),
    path("programs/<slug:slug>/bindings/", bindings.ProgramBindings.as_view(), name="program-bindings"),
    path(
        "programs/<slug:slug>/approval-bar/",
        approval_bar.ProgramApprovalBar.as_view(),
        name="program-approval-bar",
    ),
    path("programs/<slug:slug>/members/", members.ProgramMembers.as_view(), name="program-members"),
    path("programs/<slug:slug>/members/<int:pk>/", members.ProgramMember.as_view(), name="program-member"),
    path("programs/<slug:slug>/advance/", api.ProgramAdvance.as_view(), name="program-advance"),
    path("programs/<slug:slug>/migrations/", api.ProgramMigrations.as_view(), name="program-migrations"),
    path("templates/", templates.TemplateList.as_view(), name="template-list"),
    path("templates/<slug:key>/", templates.TemplateDetail.as_view(), name="template-detail"),
    path("phases/<int:pk>/replan/", api.PhaseReplan.as_view(), name="phase-replan"),
    path("phases/<int:pk>/actual-dates/", plan.PhaseActualDates.as_view(), name="phase-actual-dates"),
    path("gates/", api.GateCreateView.as_view(), name="gate-create"),
    path("gates/<int:pk>/", api.GateDetail.as_view(), name="gate-detail"),
    path("gates/<int:pk>/evaluate/", api.GateEvaluate.as_view(), name="gate-evaluate"),
    path("gates/<int:pk>/decision/", api.GateDecision.as_view(), name="gate-decision"),
    path("gates/<int:pk>/reopen/", api.GateReopen.as_view(), name="gate-reopen"),
    path("gates/<int:pk>/criteria/", criteria.GateCriteria.as_view(), name="gate-criteria"),
    path("gates/<int:pk>/repin/", criteria.GateRepin.as_view(), name="gate-repin"),
    path("criteria/<int:pk>/", criteria.CriterionDetail.as_view(), name="criterion-detail"),
    path("criteria/<int:pk>/attest/", criteria.CriterionAttest.as_view(), name="criterion-attest"),
    path(
        "criteria/<int:pk>/calibration/",
        calibration.CriterionCalibration.as_view(),
        name="criterion-calibration",
    ),
    path("migrations/<int:pk>/state/", api.MigrationState.as_view(), name="migration-state"),
]

# Prometheus' HTTP API for Grafana, under /api/prom/api/v1/ (config/urls.py; program/api/prometheus.py).
prometheus_urlpatterns = [
    path("query_range", prometheus.QueryRange.as_view(), name="prom-query-range"),
    path("query", prometheus.Query.as_view(), name="prom-query"),
    path("query_exemplars", prometheus.QueryExemplars.as_view(), name="prom-query-exemplars"),
    path("series", prometheus.Series.as_view(), name="prom-series"),
    path("labels", prometheus.Labels.as_view(), name="prom-labels"),
    path("label/<str:name>/values", prometheus.LabelValues.as_view(), name="prom-label-values"),
    path("metadata", prometheus.Metadata.as_view(), name="prom-metadata"),
    path("status/buildinfo", prometheus.BuildInfo.as_view(), name="prom-buildinfo"),
    re_path(r"^", prometheus.Unknown.as_view(), name="prom-unknown"),
]
