"""The inline SVG and colours of report.html: the cost-per-useful-answer bar chart and the heat-map scale.

The SVG is written for embedding in HTML5 (no xmlns: the document must not name any http(s) resource), every
string in it escaped, every number formatted here, so nothing from the report reaches the markup raw.
"""

from __future__ import annotations

import math
from html import escape as _html_escape

from scanner.score import render_format as fmt
from scanner.terminal import safe


def escape(value) -> str:
    """An untrusted string as SVG text: controls, escapes and bidi characters as visible escapes, then escaped."""
    return _html_escape(safe(value))


WIDTH = 1200
LABEL_W = 230
BAR_X = 240
BAR_W = 700
ROW_H = 58
TOP = 46

# ColorBrewer "Blues" (sequential, readable by colour-blind readers, prints in grey): value 0 → 1.
_BLUES = ((0.0, (0xf7, 0xfb, 0xff)), (0.25, (0xc6, 0xdb, 0xef)), (0.5, (0x6b, 0xae, 0xd6)),
          (0.75, (0x21, 0x71, 0xb5)), (1.0, (0x08, 0x30, 0x6b)))


def heat_colour(value: float) -> tuple[str, str]:
    """(background, text colour) for a ratio in [0, 1]; text turns white where the blue gets dark."""
    v = min(1.0, max(0.0, float(value)))
    for (a, ca), (b, cb) in zip(_BLUES, _BLUES[1:]):
        if v <= b:
            t = 0.0 if b == a else (v - a) / (b - a)
            rgb = tuple(round(x + (y - x) * t) for x, y in zip(ca, cb))
            break
    return "#%02x%02x%02x" % rgb, ("#ffffff" if v >= 0.55 else "#0f172a")


def heat_gradient_css() -> str:
    stops = ", ".join(f"#{r:02x}{g:02x}{b:02x} {round(p * 100)}%" for p, (r, g, b) in _BLUES)
    return f"linear-gradient(to right, {stops})"


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k that is ≥ value: the axis end, so tick labels stay short."""
    if value <= 0:
        return 1.0
    exp = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        candidate = step * 10 ** exp
        if candidate >= value * (1 - 1e-12):
            return float(f"{candidate:.12g}")
    return 10.0 ** (exp + 1)


def _clip(s: str, limit: int) -> str:
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def cost_chart(report: dict, standings: list[fmt.Standing]) -> str:
    known = fmt.providers(report)
    costs = {s.name: ((known.get(s.name) or {}).get("aggregate") or {}).get("cost_per_useful_answer_usd")
             for s in standings}
    measured = [v for v in costs.values() if fmt.is_number(v) and v >= 0]
    axis_max = nice_ceiling(max(measured)) if measured else 1.0
    height = TOP + ROW_H * max(1, len(standings)) + 10
    out = [f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
           f'aria-labelledby="cost-chart-title cost-chart-desc" preserveAspectRatio="xMinYMin meet">',
           '<title id="cost-chart-title">Cost per useful answer (USD), lower is better</title>',
           '<desc id="cost-chart-desc">One bar per provider, ranked providers first in ranking order; disqualified '
           'providers are grey and hatched, with their reasons.</desc>',
           '<defs><pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="8" height="8" fill="#e2e8f0"/>'
           '<line x1="0" y1="0" x2="0" y2="8" stroke="#94a3b8" stroke-width="3"/></pattern></defs>']
    for i in range(5):
        tick = axis_max * i / 4
        x = BAR_X + BAR_W * i / 4
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 8}" x2="{x:.1f}" y2="{height - 6}" class="grid"/>')
        out.append(f'<text x="{x:.1f}" y="{TOP - 16}" class="tick" text-anchor="middle">'
                   f"{escape(fmt.cost(tick))}</text>")
    if not standings:
        out.append(f'<text x="{BAR_X}" y="{TOP + 30}" class="caption">No provider in the report.</text>')
    for row, s in enumerate(standings):
        y = TOP + row * ROW_H
        value = costs[s.name]
        agg = (known.get(s.name) or {}).get("aggregate") or {}
        badge = f"#{s.rank}" if s.rank is not None else "disqualified" if s.disqualified else "not ranked"
        name_class = "name" if s.rank is not None else "name muted"
        out.append(f'<g class="bar-row{" disqualified" if s.rank is None else ""}">')
        out.append(f'<text x="{LABEL_W}" y="{y + 21}" text-anchor="end" class="{name_class}">'
                   f'{escape(_clip(s.name, 24))}</text>')
        out.append(f'<text x="{LABEL_W}" y="{y + 39}" text-anchor="end" class="badge-text">{escape(badge)}</text>')
        if fmt.is_number(value) and value >= 0:
            w = max(2.0, BAR_W * value / axis_max)
            fill = "#2563eb" if s.rank is not None else "url(#hatch)"
            stroke = "" if s.rank is not None else ' stroke="#64748b" stroke-width="1"'
            out.append(f'<rect x="{BAR_X}" y="{y + 6}" width="{w:.1f}" height="24" rx="3" fill="{fill}"{stroke}>'
                       f'<title>{escape(s.name)}: {escape(fmt.cost(value))} per useful answer</title></rect>')
            out.append(f'<text x="{BAR_X + w + 8:.1f}" y="{y + 23}" class="value">{escape(fmt.cost(value))}</text>')
        else:
            out.append(f'<text x="{BAR_X + 4}" y="{y + 23}" class="value muted">{fmt.NULL} no useful answer</text>')
        if s.rank is not None:
            caption = (f"P@10 {fmt.ratio(agg.get('precision_at_10'))} · recall {fmt.ratio(agg.get('recall'))} · "
                       f"fresh accuracy {fmt.ratio(agg.get('freshness_accuracy'))}")
            if (known.get(s.name) or {}).get("promotion_blocked"):
                gate = ((known.get(s.name) or {}).get("gates") or {}).get("cost_divergence", fmt.NULL)
                caption += f" · promotion blocked (cost divergence {gate})"
        else:
            caption = "; ".join(s.reasons) or "no reason given"
        out.append(f'<text x="{BAR_X}" y="{y + 47}" class="caption{" reason" if s.rank is None else ""}">'
                   f'<title>{escape(caption)}</title>{escape(_clip(caption, 150))}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)
