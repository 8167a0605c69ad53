from django.urls import path

from metrics import views

app_name = "metrics"

urlpatterns = [
    path("", views.registry, name="registry"),
    path("compare/", views.comparison_page, name="compare"),
    path("<slug:key>/", views.metric_detail, name="detail"),
]
