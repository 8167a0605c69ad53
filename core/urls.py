from django.contrib.auth import views as auth_views
from django.urls import include, path

from core.pages import inbox, password_reset, preferences, probes, site, tokens, webhooks
from core.sso.pages import LoginPage

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
    path("livez", probes.livez, name="livez"),
    path("readyz", probes.readyz, name="readyz"),
    path("version", probes.version_info, name="version"),
    path("login/", LoginPage.as_view(), name="login"),
    path("oidc/", include("core.sso.urls")),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password_reset/", password_reset.PasswordResetView.as_view(), name="password_reset"),
    path("password_reset/done/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "reset/<uidb64>/<token>/",
        password_reset.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path("reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("account/tokens/", tokens.tokens_page, name="account-tokens"),
    path("account/tokens/<int:pk>/revoke/", tokens.token_revoke, name="account-token-revoke"),
]
