from django.contrib.auth import views as auth_views
from django.urls import include, path

from core.pages import inbox, site
from core.sso.pages import LoginPage

urlpatterns = [
    path("notifications/", inbox.notification_list, name="notifications"),
    path("notifications/read-all/", inbox.notifications_read_all, name="notifications-read-all"),
    path("notifications/<int:pk>/open/", inbox.notification_open, name="notification-open"),
    path("notifications/<int:pk>/read/", inbox.notification_read, name="notification-read"),
    path("healthz", site.healthz, name="healthz"),
    path("login/", LoginPage.as_view(), name="login"),
    path("oidc/", include("core.sso.urls")),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
