from django.urls import path

from core.api import inbox, tokens, webhooks

urlpatterns = [
    path("notifications/", inbox.NotificationList.as_view(), name="notification-list"),
    path("notifications/read-all/", inbox.NotificationsReadAll.as_view(), name="notifications-read-all-api"),
    path("notifications/<int:pk>/read/", inbox.NotificationRead.as_view(), name="notification-read-api"),
    path("tokens/", tokens.TokenList.as_view(), name="token-list"),
    path("tokens/<int:pk>/", tokens.TokenDetail.as_view(), name="token-detail"),
    path("webhooks/", webhooks.WebhookList.as_view(), name="webhook-list-api"),
    path("webhooks/<int:id>/", webhooks.WebhookDetail.as_view(), name="webhook-detail-api"),
    path(
        "webhooks/<int:id>/deactivate/", webhooks.WebhookDeactivate.as_view(), name="webhook-deactivate-api"
    ),
    path(
        "webhooks/<int:id>/reactivate/", webhooks.WebhookReactivate.as_view(), name="webhook-reactivate-api"
    ),
]
