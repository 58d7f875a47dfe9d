"""What the look tests share: the two widths and two colour schemes every main page is seen at,
the overflow checks, and screenshots named after all three (test-artifacts/screenshots/)."""

from pathlib import Path

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
WIDTHS = {"1280": {"width": 1280, "height": 800}, "390": {"width": 390, "height": 844}}
SCHEMES = ("light", "dark")

OVERFLOW = "() => document.documentElement.scrollWidth <= window.innerWidth"

# Elements that hide part of what they hold behind a scroll bar of their own; at 1280 px none
# may (the server's tab bar and the inspector's table used to).
CLIPPED = """(selectors) => selectors.flatMap((s) => Array.from(document.querySelectorAll(s)))
    .filter((e) => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
    .map((e) => (e.id ? "#" + e.id : e.className || e.tagName) + " " + e.scrollWidth + ">" + e.clientWidth)"""

# The outermost elements reaching past the right edge: what a failure message names.
TOO_WIDE = """() => {
    const clipped = (e) => { for (let a = e.parentElement; a; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== "visible" && a !== document.documentElement && a !== document.body) return true; }
      return false; };
    return Array.from(document.querySelectorAll("body *"))
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !clipped(e))
      .slice(0, 5)
      .map((e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + "." + String(e.className).split(" ").join(".")
        + "[" + (e.textContent || "").trim().slice(0, 40) + "] " + Math.round(e.getBoundingClientRect().right));
}"""

# Tables wider than the box they sit in (a card clips them: the page need not scroll for columns
# to be cut off).
WIDE_TABLES = """() => Array.from(document.querySelectorAll("#main table"))
    .filter((t) => t.offsetParent !== null)
    .filter((t) => t.getBoundingClientRect().right > t.parentElement.getBoundingClientRect().right + 1)
    .map((t) => t.id || t.className)"""

# Table cells narrower than this are "very tall columns" on a phone.
NARROW_CELLS = """(least) => Array.from(document.querySelectorAll("#main table td, #main table th"))
    .filter((c) => c.offsetParent !== null && c.textContent.trim().length > 3)
    .filter((c) => { const r = c.getBoundingClientRect(); return r.width > 0 && r.width < least; })
    .map((c) => c.textContent.trim().slice(0, 30))"""


def context_for(browser, base_url: str, width: str, scheme: str, storage_state=None):
    context = browser.new_context(
        base_url=base_url,
        viewport=WIDTHS[width],
        color_scheme=scheme,
        storage_state=storage_state,
    )
    context.set_default_timeout(15_000)
    return context


def shoot(page, name: str) -> None:
    """A screenshot as tall as the page, so sticky bars sit where a reader expects them."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    height = page.evaluate("document.documentElement.scrollHeight")
    page.set_viewport_size(
        {"width": size["width"], "height": min(max(height, size["height"]), 6000)}
    )
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
    page.set_viewport_size(size)


def check_fits(page, where: str, width: str) -> list[str]:
    """Everything wrong with how the page fits its width, as readable lines (empty: fine)."""
    problems = []
    if not page.evaluate(OVERFLOW):
        wide = page.evaluate("document.documentElement.scrollWidth")
        culprits = page.evaluate(TOO_WIDE)
        problems.append(f"{where}: the page scrolls sideways ({wide} px wide): {culprits}")
    if width == "1280":
        clipped = page.evaluate(CLIPPED, [".tabs", ".tabs-list"])
        problems += [f"{where}: hides part of {c}" for c in clipped]
        problems += [f"{where}: table {t} is cut off" for t in page.evaluate(WIDE_TABLES)]
    else:
        narrow = page.evaluate(NARROW_CELLS, 110)
        if narrow:
            problems.append(f"{where}: narrow table cells {narrow[:5]}")
    return problems
