from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.throttling import TokenLoginThrottle
from core.roles import acting_user, group_names


class LockedOut(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_detail = "Too many failed sign-ins for this account from this address; try again later."
    default_code = "locked_out"


@extend_schema(tags=["auth"], summary="Exchange username and password for an API token")
class TokenObtainView(ObtainAuthToken):
    """POST {"username", "password"} → {"token"}. Failed attempts count towards the login lockout."""

    permission_classes = [AllowAny]
    authentication_classes: list[type[BaseAuthentication]] = []
    throttle_classes = [TokenLoginThrottle]

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        try:
            return super().post(request, *args, **kwargs)
        except exceptions.ValidationError:
            # django-axes flags the DRF request, which its middleware never sees: answer the lockout here,
            # as the login page does, rather than as a wrong password.
            if getattr(request, "axes_locked_out", False):
                raise LockedOut() from None
            raise


class MeOutput(serializers.Serializer[dict[str, Any]]):
    username = serializers.CharField()
    groups = serializers.ListField(child=serializers.CharField())


@extend_schema(tags=["auth"])
class MeView(APIView):
    """Who the caller is and which groups (roles, teams) they belong to; DELETE revokes their token."""

    @extend_schema(summary="Show who the caller is", responses=MeOutput)
    def get(self, request: Request) -> Response:
        user = request.user
        return Response({"username": user.username, "groups": sorted(group_names(user))})

    @extend_schema(summary="Revoke the caller's API token", responses={204: None})
    def delete(self, request: Request) -> Response:
        # Only a signed-in caller gets here (IsAuthenticated, the default): a User.
        Token.objects.filter(user=acting_user(request)).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
