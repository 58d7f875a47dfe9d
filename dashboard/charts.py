"""Geometry for the server-rendered SVG charts. Templates draw them, so labels (tool and client
names typed by users or sent by clients) go through the template's escaping like any other text."""

from datetime import datetime, timedelta

from django.utils.dateparse import parse_datetime

WIDTH, HEIGHT, PAD_LEFT, PAD_BOTTOM, PAD_TOP = 720, 200, 40, 24, 10
STEPS = {"hour": timedelta(hours=1), "day": timedelta(days=1)}


def _floor(moment: datetime, bucket: str) -> datetime:
    moment = moment.replace(minute=0, second=0, microsecond=0)
    return moment.replace(hour=0) if bucket == "day" else moment


def _nice_max(value: int) -> int:
    for nice in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000):
        if value <= nice:
            return nice
    return value


def calls_over_time(series: list[dict], since: datetime, until: datetime, bucket: str) -> dict:
    """Stacked columns (ok and failed) for every bucket of the range, empty ones included."""
    counts = {}
    for row in series:
        at = parse_datetime(row["at"]) if isinstance(row["at"], str) else row["at"]
        counts[_floor(at, bucket)] = (row["calls"], row["failed"])
    step = STEPS[bucket]
    slots = []
    moment = _floor(since, bucket)
    while moment <= until:
        slots.append(moment)
        moment += step
    peak = _nice_max(max((c for c, _ in counts.values()), default=0))
    plot_w = WIDTH - PAD_LEFT
    plot_h = HEIGHT - PAD_BOTTOM - PAD_TOP
    slot_w = plot_w / max(len(slots), 1)
    bar_w = max(slot_w * 0.7, 1)
    columns = []
    label_every = max(len(slots) // 6, 1)
    fmt = "%H:%M" if bucket == "hour" else "%b %d"
    for index, slot in enumerate(slots):
        calls, failed = counts.get(slot, (0, 0))
        ok = calls - failed
        x = PAD_LEFT + index * slot_w + (slot_w - bar_w) / 2
        ok_h = plot_h * ok / peak
        failed_h = plot_h * failed / peak
        base = PAD_TOP + plot_h
        columns.append(
            {
                "x": round(x, 1),
                "w": round(bar_w, 1),
                "ok_y": round(base - ok_h, 1),
                "ok_h": round(ok_h, 1),
                "failed_y": round(base - ok_h - failed_h, 1),
                "failed_h": round(failed_h, 1),
                "title": f"{slot.strftime('%Y-%m-%d %H:%M')}: {calls} calls, {failed} failed",
                "label": slot.strftime(fmt) if index % label_every == 0 else "",
                "label_x": round(x + bar_w / 2, 1),
            }
        )
    gridlines = [
        {"y": round(PAD_TOP + plot_h - plot_h * f, 1), "value": round(peak * f)}
        for f in (0, 0.5, 1)
    ]
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "columns": columns,
        "grid": gridlines,
        "left": PAD_LEFT,
        "label_y": HEIGHT - 6,
        "empty": not counts,
    }


def bars(items: list[tuple[str, int]]) -> dict:
    """Horizontal bars, longest first, as percentages of the largest."""
    peak = max((n for _, n in items), default=0)
    return {
        "rows": [
            {"label": label, "value": n, "pct": round(100 * n / peak, 1) if peak else 0}
            for label, n in items
        ],
        "height": 28 * len(items),
    }
