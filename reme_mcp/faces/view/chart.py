"""The timeline's chart: notes per day and per week as inline SVG, drawn on the server.

No script and no style attribute (the page's Content-Security-Policy allows neither): bars are
`<rect>`s sized by attributes, coloured by the stylesheet, each with a `<title>` for its count.
"""

from __future__ import annotations

from datetime import date, timedelta
from html import escape

DAYS_SHOWN = 60
WEEKS_SHOWN = 26
WIDTH = 600
HEIGHT = 80
LABEL_SPACE = 14


def _bars(points: list[tuple[str, int]], label: str) -> str:
    """One bar per point, scaled to the tallest; a point's label and count in its title."""
    top = max((n for _, n in points), default=0) or 1
    step = WIDTH / max(1, len(points))
    bars = []
    for i, (key, count) in enumerate(points):
        tall = round((HEIGHT - LABEL_SPACE) * count / top, 1)
        y = HEIGHT - LABEL_SPACE - tall
        bars.append(
            f'<rect class="bar" x="{i * step:.1f}" y="{y:.1f}" width="{max(1.0, step - 1):.1f}" height="{tall}">'
            f"<title>{escape(key)}: {count}</title></rect>"
        )
    first, last = (points[0][0], points[-1][0]) if points else ("", "")
    total = sum(n for _, n in points)
    return (
        f'<figure class="chart"><figcaption>{escape(label)}: {total} in all</figcaption>'
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(label)}">{"".join(bars)}'
        f'<text class="axis" x="0" y="{HEIGHT - 2}">{escape(first)}</text>'
        f'<text class="axis" x="{WIDTH}" y="{HEIGHT - 2}" text-anchor="end">{escape(last)}</text>'
        "</svg></figure>"
    )


def per_day_chart(per_day: dict[str, int], last: date) -> str:
    """The DAYS_SHOWN days up to `last`, one bar a day."""
    days = [last - timedelta(days=n) for n in range(DAYS_SHOWN - 1, -1, -1)]
    return _bars([(d.isoformat(), per_day.get(d.isoformat(), 0)) for d in days], f"per day, last {DAYS_SHOWN} days")


def per_week_chart(per_week: dict[str, int], last: date) -> str:
    """The WEEKS_SHOWN weeks up to the one holding `last`, keyed by their Monday."""
    monday = last - timedelta(days=last.weekday())
    weeks = [monday - timedelta(weeks=n) for n in range(WEEKS_SHOWN - 1, -1, -1)]
    return _bars(
        [(w.isoformat(), per_week.get(w.isoformat(), 0)) for w in weeks], f"per week, last {WEEKS_SHOWN} weeks"
    )
