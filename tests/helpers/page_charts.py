"""A LivePlot's charts as the page draws them: what its figures show (`CHARTS_JS`), the plot
area of one (`AREA_JS`), the static picture hidden beside the live view (`PICTURE_JS`), and a
drag across a chart (`drag`), for the browser tests that read or zoom the charts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page

# Per LivePlot (in order) and chart (by title): its lines (stroke, fill, vertex count, box),
# images (box) and dots (box), its figure's box and its own legend (text and box; null while
# hidden), and the panel's status and legend row.
CHARTS_JS = """
() => [...document.querySelectorAll('.jhw-liveplot')].map((plot) => ({
  status: plot.querySelector('.jhw-panel').dataset.status,
  badge: (plot.querySelector('.jhw-status') || {}).textContent || '',
  legend: (plot.querySelector('.jhw-legend') || {}).textContent || '',
  charts: Object.fromEntries([...plot.querySelectorAll('.jhw-figure')].map((fig) => {
    const box = (e) => { const r = e.getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; };
    const lines = [...fig.querySelectorAll('g.curve path.line')].map((p) => ({
      stroke: getComputedStyle(p).stroke, fill: getComputedStyle(p).fill,
      points: (p.getAttribute('d') || '').split(/[ML]/).length - 1, box: box(p),
      name: (p.parentNode.__data__ || {}).name }));
    const cell = fig.closest('.jhw-chart-cell');
    const own = cell && cell.querySelector('.jhw-chart-legend');
    const shown = own && getComputedStyle(own).display !== 'none';
    // the title as the page shows it: the chart's own heading (bqplot's, hidden beside it, can
    // miss a title set after its view was made)
    const heading = fig.querySelector('.jhw-chart-title') || fig.querySelector('text.mainheading');
    return [(heading || {}).textContent || '', {
      figure: box(fig),
      legend: shown ? { text: own.textContent, box: box(own),
                        items: [...own.querySelectorAll('.jhw-legend-item')].map(box) } : null,
      area: box(fig.querySelector('.plotarea_background')),
      lines,
      // An image's drawn box: its unit square through its transform (Chrome's bounding box of
      // a scaled <image> does not follow preserveAspectRatio="none").
      images: [...fig.querySelectorAll('image')].filter((i) => (i.getAttribute('href') || '')
        .startsWith('blob:')).map((i) => {
          const m = i.getScreenCTM();
          const a = new DOMPoint(0, 0).matrixTransform(m);
          const b = new DOMPoint(1, 1).matrixTransform(m);
          return { left: Math.min(a.x, b.x), right: Math.max(a.x, b.x),
                   top: Math.min(a.y, b.y), bottom: Math.max(a.y, b.y) }; }),
      dots: [...fig.querySelectorAll('path.dot')].map(box),
      path: fig.classList.contains('jhw-path'),
      xLabel: [...fig.querySelectorAll('g.axis text.axislabel')].map((t) => t.textContent),
    }];
  })),
}))
"""

# The static picture's SVG (hidden beside the live view), decoded from its data: URI.
PICTURE_JS = """
() => { const img = document.querySelector('img.jhw-static'); if (!img) return '';
  const src = img.getAttribute('src'); return decodeURIComponent(src.slice(src.indexOf(',') + 1)); }
"""

# The plot area of the chart titled `title`, in client pixels.
AREA_JS = """
(title) => {
  const fig = [...document.querySelectorAll('.jhw-charts .jhw-figure')].find((f) =>
    (f.querySelector('text.mainheading') || {}).textContent === title);
  const r = fig.querySelector('rect.plotarea_background').getBoundingClientRect();
  return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
}
"""


def drag(page: Page, area: dict, start: float, end: float, shift: bool = False) -> None:
    """Press at ``start`` of the plot's width, move to ``end`` and stay pressed."""
    y = (area["top"] + area["bottom"]) / 2
    width = area["right"] - area["left"]
    page.mouse.move(area["left"] + start * width, y)
    if shift:
        page.keyboard.down("Shift")
    page.mouse.down()
    page.mouse.move(area["left"] + end * width, y, steps=6)
