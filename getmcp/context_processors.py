"""Template context every dashboard page gets."""

import logging

from django.utils.functional import SimpleLazyObject

log = logging.getLogger(__name__)


def _background_status() -> dict:
    from getmcp.heartbeat import status

    try:
        return status()
    except Exception:
        # Redis itself is away: that has its own errors; the banner says nothing it cannot know.
        log.warning("background status: Redis did not answer", exc_info=True)
        return {"worker": True, "beat": True, "restarting": {}}


def background(request) -> dict:
    """`background.worker` / `background.beat`: is a Celery worker / beat alive (a banner when
    not). Lazy: only pages that show the banner (signed-in ones) ask Redis."""
    return {"background": SimpleLazyObject(_background_status)}
