from rest_framework import serializers


class ReasonInput(serializers.Serializer):
    """The optional "why" that transitions record in their history."""

    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
