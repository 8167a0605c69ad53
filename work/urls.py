from django.urls import path

from work.pages import home

urlpatterns = [
    path("", home.home, name="home"),
]
