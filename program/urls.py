from django.urls import path

from program import views, views_bindings

app_name = "program"

urlpatterns = [
    path("", views.program_list, name="list"),
    path("new/", views.program_new, name="new"),
    path("gates/<int:pk>/", views.gate_detail, name="gate"),
    path("gates/<int:pk>/decide/", views.gate_decide, name="gate-decide"),
    path("gates/<int:pk>/evaluate/", views.gate_evaluate, name="gate-evaluate"),
    path("gates/<int:pk>/reopen/", views.gate_reopen, name="gate-reopen"),
    path("criteria/<int:pk>/attest/", views.criterion_attest, name="criterion-attest"),
    path("<slug:slug>/", views.program_detail, name="detail"),
    path("<slug:slug>/advance/", views.program_advance, name="advance"),
    path("<slug:slug>/bindings/", views_bindings.program_bind, name="bind"),
]
