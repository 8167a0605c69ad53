"""The app's URLs plus /bench/bare-drf/: a DRF view with the app's own authentication and
permission defaults that answers a small JSON without touching anything else (benchmark only)."""

from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from config.urls import urlpatterns as app_urlpatterns


class BareDrfView(APIView):
    def get(self, request):
        return Response({"ok": True, "user": request.user.username})


urlpatterns = [path("bench/bare-drf/", BareDrfView.as_view(), name="bench-bare-drf"), *app_urlpatterns]
