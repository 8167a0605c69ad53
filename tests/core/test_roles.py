import pytest
from django.contrib.auth.models import AnonymousUser, Group
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory

from core.roles import PROGRAM_LEADS, ROLE_GROUPS, acting_user, has_role, require_role


@pytest.mark.django_db
def test_role_groups_exist_after_migrations():
    assert set(Group.objects.filter(name__in=ROLE_GROUPS).values_list("name", flat=True)) == set(ROLE_GROUPS)


@pytest.mark.django_db
def test_require_role_refuses_outsiders_with_a_message(lead, viewer):
    require_role(lead, PROGRAM_LEADS, "create programs")
    assert has_role(lead, PROGRAM_LEADS)
    with pytest.raises(PermissionDenied, match="Only a program creator may create programs"):
        require_role(viewer, PROGRAM_LEADS, "create programs")


def test_acting_user_is_the_signed_in_user_and_refuses_the_anonymous(viewer):
    request = RequestFactory().get("/")
    request.user = viewer
    assert acting_user(request) is viewer
    request.user = AnonymousUser()
    with pytest.raises(PermissionDenied):
        acting_user(request)
