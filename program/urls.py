from django.urls import path

from program.pages import approval_bar, bindings, calibration, criteria, members, plan, programs

app_name = "program"

urlpatterns = [
    path("", programs.program_list, name="list"),
    path("new/", programs.program_new, name="new"),
    path("gates/<int:pk>/", programs.gate_detail, name="gate"),
    path("gates/<int:pk>/decide/", programs.gate_decide, name="gate-decide"),
    path("gates/<int:pk>/evaluate/", programs.gate_evaluate, name="gate-evaluate"),
    path("gates/<int:pk>/reopen/", programs.gate_reopen, name="gate-reopen"),
    path("gates/<int:pk>/criteria/", criteria.criterion_add, name="criterion-add"),
    path("gates/<int:pk>/repin/", criteria.gate_repin, name="gate-repin"),
    path("criteria/<int:pk>/attest/", programs.criterion_attest, name="criterion-attest"),
    path("criteria/<int:pk>/edit/", criteria.criterion_edit, name="criterion-edit"),
    path("criteria/<int:pk>/delete/", criteria.criterion_delete, name="criterion-delete"),
    path(
        "criteria/<int:pk>/calibration/",
        calibration.criterion_calibration_panel,
        name="criterion-calibration",
    ),
    path("phases/<int:pk>/dates/", plan.phase_dates, name="phase-dates"),
    path("phases/<int:pk>/replan/", plan.phase_replan, name="phase-replan"),
    path("phases/<int:pk>/actual-dates/", plan.phase_actual_dates, name="phase-actual-dates"),
    path("migrations/<int:pk>/state/", plan.migration_state, name="migration-state"),
    path("<slug:slug>/", programs.program_detail, name="detail"),
    path("<slug:slug>/advance/", plan.program_advance, name="advance"),
    path("<slug:slug>/migrations/", plan.program_migrations, name="migrations"),
    path("<slug:slug>/history/", plan.program_history, name="history"),
    path("<slug:slug>/bindings/", bindings.program_bind, name="bind"),
    path("<slug:slug>/approval-bar/", approval_bar.program_approval_bar, name="approval-bar"),
    path("<slug:slug>/members/", members.program_members, name="members"),
    path("<slug:slug>/members/<int:pk>/", members.program_member, name="member"),
]
