"""Views that raise each kind of error, so the single error shape can be checked for every status."""

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.urls import path
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from core.api.errors import PayloadTooLarge
from core.errors import ApplicationError


class Input(serializers.Serializer):
    size = serializers.IntegerField(min_value=1)


class Raiser(APIView):
    permission_classes = [AllowAny]

    def post(self, request, kind):
        if kind == "validation":
            Input(data=request.data).is_valid(raise_exception=True)
        if kind == "django-validation":
            raise DjangoValidationError({"threshold": ["Must be finite."]})
        if kind == "forbidden":
            raise PermissionDenied("Only a program lead may decide gates.")
        if kind == "missing":
            raise Http404
        if kind == "conflict":
            raise ApplicationError("Gate was decided by someone else.")
        if kind == "unprocessable":
            raise ApplicationError(
                "Idempotency-Key reused with another body.", status=422, field="Idempotency-Key"
            )
        if kind == "too-large":
            raise PayloadTooLarge("At most 50000 rows per batch.")
        return None


urlpatterns = [path("api/v1/raise/<str:kind>/", Raiser.as_view())]
