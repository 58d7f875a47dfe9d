"""The WebSocket routes (Channels): the dashboard session authenticates them, and only the
deployment's own hosts may open them (a page on another site cannot ride a logged-in session)."""

from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.urls import path

from .consumers import InspectorConsumer

websocket_urlpatterns = [
    path("ws/inspector/<slug:slug>/", InspectorConsumer.as_asgi()),
]


def websocket_application():
    return AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
