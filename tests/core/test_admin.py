import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_admin_changelists_render_on_the_demo(client):
    import io

    call_command("load_demo", stdout=io.StringIO())
    from django.contrib.auth.models import User

    client.force_login(User.objects.get(username="admin"))
    for path in (
        "metrics/metricdefinition",
        "metrics/ingestbatch",
        "program/gate",
        "program/decision",
        "freeze/freezeexception",
        "freeze/freezewindow",
        "core/transition",
        "core/notification",
    ):
        response = client.get(f"/admin/{path}/")
        assert response.status_code == 200, path


@pytest.mark.django_db
def test_admin_gate_evaluate_action_uses_the_service(client):
    import io

    from program.models import Evaluation, Gate

    call_command("load_demo", stdout=io.StringIO())
    from django.contrib.auth.models import Group, User

    from core.roles import PROGRAM_LEADS

    admin = User.objects.get(username="admin")
    admin.groups.add(Group.objects.get(name=PROGRAM_LEADS))  # evaluating on demand needs a role
    client.force_login(admin)
    frontier = Gate.objects.get(phase__kind="frontier", kind="exit")
    assert not Evaluation.objects.filter(gate=frontier).exists()
    client.post("/admin/program/gate/", {"action": "evaluate", "_selected_action": [frontier.pk]})
    assert Evaluation.objects.filter(gate=frontier).exists()
