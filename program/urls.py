from django.urls import path

from program import views, views_bindings, views_criteria

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
    path("<slug:slug>/", views.program_detail, name="detail"),
    path("<slug:slug>/advance/", views.program_advance, name="advance"),
    path("<slug:slug>/bindings/", views_bindings.program_bind, name="bind"),
]
