from django.urls import path

from program import views

app_name = "program"

urlpatterns = [
    path("", views.program_list, name="list"),
]
