import pytest

from tests.conftest import PASSWORD


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/programs/", "/freeze/", "/metrics/"])
def test_anonymous_pages_redirect_to_login(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


@pytest.mark.django_db
def test_login_page_signs_in_and_shows_navigation(client, viewer):
    assert client.get("/login/").status_code == 200
    response = client.post("/login/", {"username": "viewer", "password": PASSWORD}, follow=True)
    assert response.status_code == 200
    html = response.content.decode()
    for label in ("Programs", "Freeze list", "Metrics"):
        assert label in html


@pytest.mark.django_db
def test_login_locks_out_after_repeated_failures(client, viewer, settings):
    settings.AXES_FAILURE_LIMIT = 3
    for _ in range(3):
        client.post("/login/", {"username": "viewer", "password": "wrong"})
    locked = client.post("/login/", {"username": "viewer", "password": PASSWORD})
    assert locked.status_code == 429
