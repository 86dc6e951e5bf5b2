# SPDX-License-Identifier: MIT
"""svg.py - a small SVG writer for the soak's plot (report.py): stacked
panels of time series over one time axis, fault windows as bands behind
them.  No dependency beyond Python's standard library."""
from xml.sax.saxutils import escape

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
          "#8c564b", "#e377c2", "#17becf"]


def runs(pts):
    """The stretches of pts between points whose value is None (a gap)."""
    run = []
    for t, v in pts:
        if v is None:
            if run:
                yield run
            run = []
        else:
            run.append((t, v))
    if run:
        yield run


class Plot:
    def __init__(self, width, t0, t1):
        self.w, self.t0, self.t1 = width, t0, max(t1, t0 + 1)
        self.parts, self.y = [], 10
        self.left, self.right = 70, 170

    def x(self, t):
        span = self.w - self.left - self.right
        return self.left + (t - self.t0) * span / (self.t1 - self.t0)

    def text(self, x, y, s, size=11, anchor="start", color="#222"):
        self.parts.append(
            '<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" '
            'fill="%s" font-family="sans-serif">%s</text>' % (
                x, y, size, anchor, color, escape(s)))

    def title(self, s):
        self.text(self.w / 2, self.y + 14, s, 14, "middle")
        self.y += 26

    def panel(self, title, series, bands=(), height=190, unit=""):
        """series: [(label, color, [(t, v), ...])]; bands: [(t0, t1,
        color)] drawn behind."""
        top, bottom = self.y + 18, self.y + 18 + height
        vmax = max([v for _, _, pts in series for _, v in pts
                    if v is not None] + [1e-9])
        vmax *= 1.08

        def y(v):
            return bottom - v * height / vmax
        self.text(self.left, self.y + 12, title, 12)
        for b0, b1, color in bands:
            self.parts.append(
                '<rect x="%.1f" y="%d" width="%.1f" height="%d" '
                'fill="%s" opacity="0.35"/>' % (
                    self.x(b0), top, max(0.5, self.x(b1) - self.x(b0)),
                    height, color))
        self.parts.append(
            '<rect x="%d" y="%d" width="%d" height="%d" fill="none" '
            'stroke="#888"/>' % (self.left, top,
                                 self.w - self.left - self.right, height))
        for i in range(5):
            v = vmax * i / 4
            self.text(self.left - 4, y(v) + 4, "%.4g%s" % (v, unit), 10,
                      "end", "#555")
        for i, (label, color, pts) in enumerate(series):
            for run in runs(pts):
                path = " ".join("%.1f,%.1f" % (self.x(t), y(v))
                                for t, v in run)
                self.parts.append(
                    '<polyline points="%s" fill="none" stroke="%s" '
                    'stroke-width="1.2"/>' % (path, color))
            ly = top + 12 + i * 14
            lx = self.w - self.right + 8
            self.parts.append('<rect x="%d" y="%d" width="10" height="3" '
                              'fill="%s"/>' % (lx, ly - 4, color))
            self.text(lx + 14, ly, label, 10)
        self.y = bottom + 8

    def axis(self):
        """Minutes since the start, under the last panel."""
        span = (self.t1 - self.t0) / 60.0
        step = max(1, int(span / 10) or 1) if span >= 2 else 0.25
        m = 0.0
        while m <= span + 1e-9:
            self.text(self.x(self.t0 + m * 60), self.y + 10, "%g" % m, 10,
                      "middle", "#555")
            m += step
        self.text(self.w / 2, self.y + 24, "minutes", 10, "middle", "#555")
        self.y += 30

    def legend(self, items):
        x = self.left
        for label, color in items:
            self.parts.append('<rect x="%d" y="%d" width="12" height="10" '
                              'fill="%s" opacity="0.5"/>' % (
                                  x, self.y, color))
            self.text(x + 15, self.y + 9, label, 10)
            x += 20 + 7 * len(label)
        self.y += 18

    def write(self, path):
        with open(path, "w") as f:
            f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" '
                    'height="%d" viewBox="0 0 %d %d">\n' % (
                        self.w, self.y + 10, self.w, self.y + 10))
            f.write('<rect width="100%" height="100%" fill="white"/>\n')
            f.write("\n".join(self.parts))
            f.write("\n</svg>\n")
