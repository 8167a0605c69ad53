from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

from core.roles import group_names


class TokenLoginThrottle(AnonRateThrottle):
    rate = "30/min"


@extend_schema(tags=["auth"], summary="Exchange username and password for an API token")
class TokenObtainView(ObtainAuthToken):
    """POST {"username", "password"} → {"token"}. Failed attempts count towards the login lockout."""

    permission_classes = [AllowAny]
    authentication_classes: list = []
    throttle_classes = [TokenLoginThrottle]


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    groups = serializers.ListField(child=serializers.CharField())


@extend_schema(tags=["auth"])
class MeView(APIView):
    """Who the caller is and which groups (roles, teams) they belong to; DELETE revokes their token."""

    @extend_schema(responses=MeSerializer)
    def get(self, request):
        user = request.user
        return Response({"username": user.username, "groups": sorted(group_names(user))})

    @extend_schema(responses={204: None})
    def delete(self, request):
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
