from django.urls import path

from work.pages import home, search

urlpatterns = [
    path("", home.home, name="home"),
    path("search/", search.search_page, name="search"),
]
