from django.urls import path

from core import api_inbox

urlpatterns = [
    path("notifications/", api_inbox.NotificationList.as_view(), name="notification-list"),
    path(
        "notifications/read-all/", api_inbox.NotificationsReadAll.as_view(), name="notifications-read-all-api"
    ),
    path("notifications/<int:pk>/read/", api_inbox.NotificationRead.as_view(), name="notification-read-api"),
]
