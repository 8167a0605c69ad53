from django.urls import path

from freeze import views

app_name = "freeze"

urlpatterns = [
    path("", views.freeze_list, name="list"),
]
