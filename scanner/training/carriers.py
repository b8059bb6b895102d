"""Put a text into the spec's carriers — comment, CSS-hidden, white on white, alt, JSON-LD, a hidden PDF layer,
a visible paragraph — as whole documents, to be read by the scanner's real loaders."""

from __future__ import annotations

import html
import json
import textwrap

CARRIERS = ("comment", "css_hidden", "white_on_white", "alt", "json_ld", "pdf_hidden", "visible")
HIDDEN_CARRIERS = CARRIERS[:-1]

_PAGE = ('<!DOCTYPE html><html lang="es-MX"><head><meta charset="utf-8"><title>Aceros del Bajío | Contacto</title>'
         '{head}</head><body><header><nav><a href="/">Inicio</a> | <a href="/productos">Productos</a></nav></header>'
         '<main><h1>Contacto</h1><p>Fabricamos varilla corrugada y perfiles estructurales en Celaya desde 1978.</p>'
         '{carrier}<p>Planta y oficinas: Carretera Celaya-Salamanca km 8, Celaya, Gto.</p></main>'
         '<footer><p>Aceros del Bajío, S.A. de C.V.</p></footer></body></html>')


def html_carrier(kind: str, text: str) -> str:
    """The page with `text` in carrier `kind`: one of CARRIERS but pdf_hidden, or `meta` (a meta description in the
    head: a carrier of the issue's, not among the bench's seven)."""
    esc = html.escape(text, quote=False)
    if kind == "meta":
        return _PAGE.format(head=f'<meta name="description" content="{html.escape(text, quote=True)}">', carrier="")
    if kind == "comment":
        inner = f"<!-- {text.replace('--', '- -')} -->"
    elif kind == "css_hidden":
        inner = f'<div style="display:none">{esc}</div>'
    elif kind == "white_on_white":
        inner = f'<p style="color:#ffffff;background-color:#ffffff">{esc}</p>'
    elif kind == "alt":
        inner = f'<img src="/img/planta.jpg" alt="{html.escape(text, quote=True)}">'
    elif kind == "json_ld":
        data = json.dumps({"@context": "https://schema.org", "@type": "Organization", "name": "Aceros del Bajío",
                           "description": text}, ensure_ascii=False).replace("</", "<\\/")
        inner = f'<script type="application/ld+json">{data}</script>'
    elif kind == "visible":
        inner = f"<p>{esc}</p>"
    else:
        raise ValueError(kind)
    return _PAGE.format(head="", carrier=inner)


def pdf_carrier(text: str) -> bytes:
    """A one-page report whose visible line is ordinary and whose text layer in render mode 3 carries `text`."""
    from scanner.pdfwriter import TextRun, make_pdf

    runs = [TextRun("Informe trimestral de produccion, planta Celaya.", 72, 740, 12)]
    lines = textwrap.wrap(" ".join(text.split()), 95)[:60] or [" "]
    for k, line in enumerate(lines):
        runs.append(TextRun(line, 72, 700 - 11 * k, 9, render_mode=3))
    return make_pdf([runs])


def document(kind: str, text: str) -> tuple[bytes, str]:
    """(bytes, file name) of `text` in carrier `kind`."""
    if kind == "pdf_hidden":
        return pdf_carrier(text), "carrier.pdf"
    return html_carrier(kind, text).encode("utf-8"), "carrier.html"
