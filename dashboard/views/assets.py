"""Serves /static/ from the repository's static/ directory when nothing in front of Django does,
so the dashboard runs with no build or collect step (production may still put a CDN in front)."""

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.http import Http404, HttpResponse
from django.views.static import serve

STATIC_DIR = settings.BASE_DIR / "static"
KEPT_HEADERS = ("Content-Type", "Content-Encoding", "Last-Modified")


def static_file(request, path):
    try:
        response = serve(request, path, document_root=STATIC_DIR)
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
