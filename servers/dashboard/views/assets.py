"""Serves /static/ from the repository's static/ directory when nothing in front of Django does,
so the dashboard runs with no build or collect step (production may still put a CDN in front)."""

from django.conf import settings
from django.views.static import serve

STATIC_DIR = settings.BASE_DIR / "static"


def static_file(request, path):
    response = serve(request, path, document_root=STATIC_DIR)
    response["Cache-Control"] = "public, max-age=300"
    return response
