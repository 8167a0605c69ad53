from django.urls import path

from program import views, views_approval_bar, views_bindings, views_calibration, views_criteria, views_plan

app_name = "program"

urlpatterns = [
    path("", views.program_list, name="list"),
    path("new/", views.program_new, name="new"),
    path("gates/<int:pk>/", views.gate_detail, name="gate"),
    path("gates/<int:pk>/decide/", views.gate_decide, name="gate-decide"),
    path("gates/<int:pk>/evaluate/", views.gate_evaluate, name="gate-evaluate"),
    path("gates/<int:pk>/reopen/", views.gate_reopen, name="gate-reopen"),
    path("gates/<int:pk>/criteria/", views_criteria.criterion_add, name="criterion-add"),
    path("gates/<int:pk>/repin/", views_criteria.gate_repin, name="gate-repin"),
    path("criteria/<int:pk>/attest/", views.criterion_attest, name="criterion-attest"),
    path("criteria/<int:pk>/edit/", views_criteria.criterion_edit, name="criterion-edit"),
    path("criteria/<int:pk>/delete/", views_criteria.criterion_delete, name="criterion-delete"),
    path(
        "criteria/<int:pk>/calibration/",
        views_calibration.criterion_calibration_panel,
        name="criterion-calibration",
    ),
    path("phases/<int:pk>/dates/", views_plan.phase_dates, name="phase-dates"),
    path("phases/<int:pk>/replan/", views_plan.phase_replan, name="phase-replan"),
    path("phases/<int:pk>/actual-dates/", views_plan.phase_actual_dates, name="phase-actual-dates"),
    path("migrations/<int:pk>/state/", views_plan.migration_state, name="migration-state"),
    path("<slug:slug>/", views.program_detail, name="detail"),
    path("<slug:slug>/advance/", views_plan.program_advance, name="advance"),
    path("<slug:slug>/migrations/", views_plan.program_migrations, name="migrations"),
    path("<slug:slug>/history/", views_plan.program_history, name="history"),
    path("<slug:slug>/bindings/", views_bindings.program_bind, name="bind"),
    path("<slug:slug>/approval-bar/", views_approval_bar.program_approval_bar, name="approval-bar"),
]
