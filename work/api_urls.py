from django.urls import path

from work import api

urlpatterns = [
    path("me/work/", api.MyWorkView.as_view(), name="my-work"),
]
