from django.urls import path

from work.api import work

urlpatterns = [
    path("me/work/", work.MyWorkView.as_view(), name="my-work"),
]
