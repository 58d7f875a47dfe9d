"""Serves /static/ from the repository's static/ directory when nothing in front of Django does,
so the dashboard runs with no build or collect step (production may still put a CDN in front).
A path not found there is looked up in the installed apps' static files (Django's finders): the
Swagger UI of /api/docs/ comes from the drf-spectacular-sidecar package that way."""

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.exceptions import SuspiciousFileOperation
from django.http import Http404, HttpResponse
from django.views.static import serve

STATIC_DIR = settings.BASE_DIR / "static"
KEPT_HEADERS = ("Content-Type", "Content-Encoding", "Last-Modified")


def _document_root(path: str):
    """static/ first; else the app directory that holds the file (finders refuse `..`)."""
    if (STATIC_DIR / path).is_file():
        return STATIC_DIR
    found = finders.find(path)
    if not found:
        return STATIC_DIR  # serve() answers the 404
    root = str(found)[: -len(path)] if str(found).endswith(path) else None
    return root or STATIC_DIR


def static_file(request, path):
    try:
        root = _document_root(path)
        response = serve(request, path, document_root=root)
    except SuspiciousFileOperation:
        raise Http404("No such file.") from None
    if response.streaming:
        # Django's file response iterates synchronously, which ASGI servers warn about on every
        # file; the dashboard's assets are a few kilobytes, so they are sent in one piece.
        try:
            whole = HttpResponse(b"".join(response.streaming_content))
        finally:
            response.close()
        for header in KEPT_HEADERS:
            if header in response:
                whole[header] = response[header]
        response = whole
    response["Cache-Control"] = "public, max-age=300"
    return response
