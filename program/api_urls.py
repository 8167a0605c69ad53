from django.urls import path

from program import api, api_plan

urlpatterns = [
    path("programs/", api.ProgramListCreate.as_view(), name="program-list"),
    path("programs/<slug:slug>/", api.ProgramDetail.as_view(), name="program-detail"),
    path("programs/<slug:slug>/advance/", api.ProgramAdvance.as_view(), name="program-advance"),
    path("programs/<slug:slug>/migrations/", api.ProgramMigrations.as_view(), name="program-migrations"),
    path("phases/<int:pk>/replan/", api.PhaseReplan.as_view(), name="phase-replan"),
    path("phases/<int:pk>/actual-dates/", api_plan.PhaseActualDates.as_view(), name="phase-actual-dates"),
    path("gates/", api.GateCreateView.as_view(), name="gate-create"),
    path("gates/<int:pk>/", api.GateDetail.as_view(), name="gate-detail"),
    path("gates/<int:pk>/evaluate/", api.GateEvaluate.as_view(), name="gate-evaluate"),
    path("gates/<int:pk>/decision/", api.GateDecision.as_view(), name="gate-decision"),
    path("gates/<int:pk>/reopen/", api.GateReopen.as_view(), name="gate-reopen"),
    path("gates/<int:pk>/criteria/", api.GateCriteria.as_view(), name="gate-criteria"),
    path("criteria/<int:pk>/attest/", api.CriterionAttest.as_view(), name="criterion-attest"),
    path("migrations/<int:pk>/state/", api.MigrationState.as_view(), name="migration-state"),
]
