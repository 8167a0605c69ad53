from django.contrib.auth import views as auth_views
from django.urls import path

from core.pages import inbox, preferences, site

urlpatterns = [
    path("notifications/", inbox.notification_list, name="notifications"),
    path("notifications/read-all/", inbox.notifications_read_all, name="notifications-read-all"),
    path("notifications/<int:pk>/open/", inbox.notification_open, name="notification-open"),
    path("notifications/<int:pk>/read/", inbox.notification_read, name="notification-read"),
    path("account/notifications/", preferences.notification_preferences, name="notification-preferences"),
    path("healthz", site.healthz, name="healthz"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
