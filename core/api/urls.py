from django.urls import path

from core.api import inbox

urlpatterns = [
    path("notifications/", inbox.NotificationList.as_view(), name="notification-list"),
    path("notifications/read-all/", inbox.NotificationsReadAll.as_view(), name="notifications-read-all-api"),
    path("notifications/<int:pk>/read/", inbox.NotificationRead.as_view(), name="notification-read-api"),
]
