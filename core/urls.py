from django.contrib.auth import views as auth_views
from django.urls import path

from core.pages import inbox, preferences, site, webhooks

urlpatterns = [
    path("notifications/", inbox.notification_list, name="notifications"),
    path("notifications/read-all/", inbox.notifications_read_all, name="notifications-read-all"),
    path("notifications/<int:pk>/open/", inbox.notification_open, name="notification-open"),
    path("notifications/<int:pk>/read/", inbox.notification_read, name="notification-read"),
    path("account/notifications/", preferences.notification_preferences, name="notification-preferences"),
    path("account/webhooks/", webhooks.webhook_list, name="webhooks"),
    path("account/webhooks/<int:pk>/edit/", webhooks.webhook_edit, name="webhook-edit"),
    path("account/webhooks/<int:pk>/deactivate/", webhooks.webhook_deactivate, name="webhook-deactivate"),
    path("account/webhooks/<int:pk>/reactivate/", webhooks.webhook_reactivate, name="webhook-reactivate"),
    path("account/webhooks/<int:pk>/delete/", webhooks.webhook_delete, name="webhook-delete"),
    path("healthz", site.healthz, name="healthz"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
