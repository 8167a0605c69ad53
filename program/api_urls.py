from django.urls import path

from program import (
    api,
    api_approval_bar,
    api_bindings,
    api_calibration,
    api_criteria,
    api_plan,
    api_templates,
)

urlpatterns = [
    path("programs/", api.ProgramListCreate.as_view(), name="program-list"),
    path("programs/<slug:slug>/", api.ProgramDetail.as_view(), name="program-detail"),
    path("programs/<slug:slug>/bindings/", api_bindings.ProgramBindings.as_view(), name="program-bindings"),
    path(
        "programs/<slug:slug>/approval-bar/",
        api_approval_bar.ProgramApprovalBar.as_view(),
        name="program-approval-bar",
    ),
    path("programs/<slug:slug>/advance/", api.ProgramAdvance.as_view(), name="program-advance"),
    path("programs/<slug:slug>/migrations/", api.ProgramMigrations.as_view(), name="program-migrations"),
    path("templates/", api_templates.TemplateList.as_view(), name="template-list"),
    path("templates/<slug:key>/", api_templates.TemplateDetail.as_view(), name="template-detail"),
    path("phases/<int:pk>/replan/", api.PhaseReplan.as_view(), name="phase-replan"),
    path("phases/<int:pk>/actual-dates/", api_plan.PhaseActualDates.as_view(), name="phase-actual-dates"),
    path("gates/", api.GateCreateView.as_view(), name="gate-create"),
    path("gates/<int:pk>/", api.GateDetail.as_view(), name="gate-detail"),
    path("gates/<int:pk>/evaluate/", api.GateEvaluate.as_view(), name="gate-evaluate"),
    path("gates/<int:pk>/decision/", api.GateDecision.as_view(), name="gate-decision"),
    path("gates/<int:pk>/reopen/", api.GateReopen.as_view(), name="gate-reopen"),
    path("gates/<int:pk>/criteria/", api_criteria.GateCriteria.as_view(), name="gate-criteria"),
    path("gates/<int:pk>/repin/", api_criteria.GateRepin.as_view(), name="gate-repin"),
    path("criteria/<int:pk>/", api_criteria.CriterionDetail.as_view(), name="criterion-detail"),
    path("criteria/<int:pk>/attest/", api_criteria.CriterionAttest.as_view(), name="criterion-attest"),
    path(
        "criteria/<int:pk>/calibration/",
        api_calibration.CriterionCalibration.as_view(),
        name="criterion-calibration",
    ),
    path("migrations/<int:pk>/state/", api.MigrationState.as_view(), name="migration-state"),
]
