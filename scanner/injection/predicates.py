"""Named predicates the rule YAML refers to: logic about a unit that needs code.

Each takes (unit, document) and returns a short reason (a true string) when it holds, or "" when it does not.
The reason ends up in the finding's message ("hidden by display:none on <div class=promo>").
"""

from __future__ import annotations

import re

import tinycss2
from tinycss2.color3 import parse_color

from scanner.units import Channel

WHITE = (1.0, 1.0, 1.0, 1.0)
BLACK = (0.0, 0.0, 0.0, 1.0)
MIN_CONTRAST = 1.35          # WCAG contrast ratio below which text is practically invisible
OFFSCREEN_PX = -500.0
_LENGTH = re.compile(r"^(-?\d*\.?\d+)\s*(px|pt|em|rem|%|vw|vh|ex|ch|cm|mm|in)?$")
_RECT_ZERO = re.compile(r"rect\(\s*0(?:px)?\s*,?\s*0(?:px)?\s*,?\s*0(?:px)?\s*,?\s*0(?:px)?\s*\)")
_RECT_ONE = re.compile(r"rect\(\s*[01](?:px)?\s*,?\s*[01](?:px)?\s*,?\s*[01](?:px)?\s*,?\s*[01](?:px)?\s*\)")


def _length_px(value: str, font_px: float = 16.0) -> float | None:
    value = value.strip().split()[0] if value.strip() else ""
    m = _LENGTH.match(value)
    if not m:
        return None
    number = float(m.group(1))
    unit = m.group(2) or "px"
    factor = {"px": 1.0, "pt": 4 / 3, "em": font_px, "rem": 16.0, "ex": font_px / 2, "ch": font_px / 2,
              "%": font_px / 100, "vw": 12.8, "vh": 7.2, "cm": 37.8, "mm": 3.78, "in": 96.0}[unit]
    return number * factor


def _color(value: str | None):
    if not value:
        return None
    try:
        c = parse_color(value.replace("!important", "").strip())
    except Exception:
        return None
    if c is None or c == "currentColor":
        return None
    return (c.red, c.green, c.blue, c.alpha)


def _background_color(style: dict):
    if "background-color" in style:
        return _color(style["background-color"])
    bg = style.get("background")
    if not bg:
        return None
    for token in tinycss2.parse_component_value_list(bg):
        if token.type in ("hash", "ident", "function"):
            c = _color(tinycss2.serialize([token]))
            if c is not None:
                return c
    return None


def _luminance(c) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(x) for x in c[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg, bg) -> float:
    la, lb = _luminance(fg), _luminance(bg)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def _describe(el) -> str:
    ident = f"#{el.attrs['id']}" if el.attrs.get("id") else ""
    cls = "." + ".".join(sorted(el.classes)) if el.classes else ""
    return f"<{el.tag}{ident}{cls}>"


def _chain(unit):
    el = unit.element
    while el is not None:
        yield el
        el = el.parent


def css_hidden(unit, doc) -> str:
    """A person viewing the page would not see this text (HTML units only)."""
    if unit.element is None or unit.channel not in (
            Channel.VISIBLE_TEXT, Channel.ATTRIBUTE, Channel.TEXTAREA, Channel.SVG_TEXT):
        return ""
    color = None
    background = None
    font_px = None
    visibility_decided = False
    for el in _chain(unit):
        style = el.style
        if "hidden" in el.attrs and el.tag not in ("input",):
            return f"hidden attribute on {_describe(el)}"
        if el.tag == "input" and el.attrs.get("type", "").lower() == "hidden":
            return f"hidden input {_describe(el)}"
        if el.tag in ("head",):
            return "inside <head>"
        # Presentational attributes of old markup: <font color>, bgcolor.
        if color is None and el.tag == "font" and "color" in el.attrs:
            color = _color(el.attrs["color"])
        if background is None and "bgcolor" in el.attrs:
            bg = _color(el.attrs["bgcolor"])
            if bg is not None and bg[3] > 0.5:
                background = bg
        if not style:
            hidden_class = _utility_hidden_class(el)
            if hidden_class:
                return f"utility class .{hidden_class} on {_describe(el)} (hidden by common CSS frameworks)"
            continue
        display = style.get("display", "")
        if display.split()[:1] == ["none"]:
            return f"display:none on {_describe(el)}"
        vis = style.get("visibility")
        if vis and not visibility_decided:
            visibility_decided = True
            if vis.split()[0] in ("hidden", "collapse"):
                return f"visibility:{vis.split()[0]} on {_describe(el)}"
        if style.get("content-visibility", "").startswith("hidden"):
            return f"content-visibility:hidden on {_describe(el)}"
        opacity = style.get("opacity")
        if opacity is not None:
            try:
                o = float(opacity.rstrip("%")) / (100 if opacity.endswith("%") else 1)
                if o <= 0.05:
                    return f"opacity:{opacity} on {_describe(el)}"
            except ValueError:
                pass
        if font_px is None:
            size = style.get("font-size")
            if size is None and "font" in style:
                m = re.search(r"(-?\d*\.?\d+(?:px|pt|em|rem|%)?)\s*(?:/\S+)?\s+\S", style["font"])
                size = m.group(1) if m else None
            if size is not None:
                px = _length_px(size)
                if px is not None:
                    font_px = px
                    if px <= 1.0:
                        return f"font-size:{size} on {_describe(el)}"
        if color is None:
            color = _color(style.get("-webkit-text-fill-color")) or _color(style.get("color"))
            if color is not None and color[3] <= 0.05:
                return f"transparent text colour on {_describe(el)}"
        if background is None:
            bg = _background_color(style)
            if bg is not None and bg[3] > 0.5:
                background = bg
        position = style.get("position", "")
        if position.split()[:1] in (["absolute"], ["fixed"], ["relative"]):
            for side in ("left", "top", "right", "bottom"):
                if side in style:
                    px = _length_px(style[side])
                    if px is not None and px <= OFFSCREEN_PX:
                        return f"off-screen ({side}:{style[side]}) on {_describe(el)}"
        indent = style.get("text-indent")
        if indent:
            px = _length_px(indent)
            if px is not None and px <= OFFSCREEN_PX:
                return f"text-indent:{indent} on {_describe(el)}"
        for margin in ("margin-left", "margin-top"):
            if margin in style:
                px = _length_px(style[margin])
                if px is not None and px <= -2000:
                    return f"{margin}:{style[margin]} on {_describe(el)}"
        clip = style.get("clip", "")
        if clip and (_RECT_ZERO.search(clip) or (_RECT_ONE.search(clip) and position.startswith("absolute"))):
            return f"clip:{clip} on {_describe(el)}"
        clip_path = style.get("clip-path", "")
        if re.search(r"inset\(\s*(?:50|100)%|circle\(\s*0", clip_path):
            return f"clip-path:{clip_path} on {_describe(el)}"
        overflow = style.get("overflow", "")
        if overflow.startswith("hidden"):
            for dim in ("width", "height", "max-width", "max-height"):
                if dim in style:
                    px = _length_px(style[dim])
                    if px is not None and px <= 1.0:
                        return f"{dim}:{style[dim]} with overflow:hidden on {_describe(el)}"
        transform = style.get("transform", "")
        if re.search(r"scale[xy]?\(\s*0(?:\.0+)?\s*[,)]", transform):
            return f"transform:{transform} on {_describe(el)}"
    fg = color or BLACK
    bg = background or WHITE
    if contrast(fg, bg) < MIN_CONTRAST:
        return f"text colour {_hex(fg)} on background {_hex(bg)} (contrast {contrast(fg, bg):.2f}:1)"
    return ""


# Class names that mean "hidden" in the common CSS frameworks (Bootstrap, Tailwind, WordPress, Foundation…),
# used when the page's own stylesheets say nothing about them (the framework's stylesheet is external).
HIDDEN_UTILITY_CLASSES = ("d-none", "hidden", "hide", "is-hidden", "invisible", "display-none", "u-hidden",
                          "visually-hidden", "sr-only", "screen-reader-text", "visuallyhidden", "show-for-sr",
                          "element-invisible", "offscreen")


def _utility_hidden_class(el) -> str:
    for cls in HIDDEN_UTILITY_CLASSES:
        if cls in el.classes:
            return cls
    return ""


def _hex(c) -> str:
    return "#" + "".join(f"{round(x * 255):02x}" for x in c[:3])


def not_css_hidden(unit, doc) -> str:
    return "" if css_hidden(unit, doc) else "visible"


# --- PDF --------------------------------------------------------------------------------------------

OCR_IMAGE_COVERAGE = 0.85
MIN_READABLE_PT = 2.0        # under 2 pt a printed or rendered character is a speck, not text a person reads


def ocr_layer(unit, doc) -> str:
    """Invisible text over a page-covering image: the normal OCR layer of a scanned page."""
    if unit.channel != Channel.PDF_TEXT:
        return ""
    a = unit.attrs
    if a.get("render_mode") in (3, 7) and (a.get("image_coverage") or 0) >= OCR_IMAGE_COVERAGE:
        return "OCR text layer over a scanned page image"
    return ""


def pdf_invisible(unit, doc) -> str:
    """PDF text a reader of the rendered page does not see (the OCR layer of a scan excepted)."""
    if unit.channel != Channel.PDF_TEXT:
        return ""
    a = unit.attrs
    mode = a.get("render_mode")
    if mode in (3, 7):
        if ocr_layer(unit, doc):
            return ""
        return f"text render mode {mode} (invisible)"
    fill = a.get("fill")
    if fill is not None and len(fill) >= 3 and min(fill[:3]) >= 0.95:
        return f"white text (fill {_hex(tuple(fill) + (1.0,))}) on a white page"
    size = a.get("font_size")
    if size is not None and size < MIN_READABLE_PT:
        return f"font size {size} pt"
    if a.get("covered_by_image") and (a.get("image_coverage") or 0) < OCR_IMAGE_COVERAGE:
        return "text painted over by an image drawn after it"
    if a.get("outside_cropbox"):
        return "text placed outside the page's crop box"
    alpha = a.get("alpha")
    if alpha is not None and alpha <= 0.05:
        return f"fill opacity {alpha}"
    return ""


def not_pdf_invisible(unit, doc) -> str:
    return "" if pdf_invisible(unit, doc) else "visible"


# --- Unicode ----------------------------------------------------------------------------------------

_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
_RTL_LETTERS = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")


def bidi_override(unit, doc) -> str:
    """Bidi embedding/override/isolate controls in text with no right-to-left script."""
    m = _BIDI_CONTROLS.search(unit.text)
    if not m or _RTL_LETTERS.search(unit.text):
        return ""
    return f"bidi control U+{ord(m.group(0)):04X} in left-to-right text"


# --- structured data ----------------------------------------------------------------------------------

_CONFIG_KEY = re.compile(
    r"(?i)(?:^|[_\-.])?(?:instructions?|instrucciones|prompt|system|sistema|directive|directiva|ai[_\-]?note|note[_\-]?for[_\-]?ai|"
    r"llm|assistant|asistente|agent[_\-]?note|model[_\-]?note|ai[_\-]?instructions?|for[_\-]?ai|para[_\-]?(?:la[_\-]?)?ia)")
# Schema.org properties that contain one of those words and are ordinary.
_SCHEMA_ORG_OK = frozenset({"recipeInstructions", "instructionalMethod", "operatingSystem", "softwareRequirements",
                            "assistant", "availableLanguage"})


def jsonld_config_key(unit, doc) -> str:
    """A JSON-LD value under an invented, configuration-like key aimed at the AI ("instructions", "aiNote")."""
    if unit.channel != Channel.JSON_LD or unit.attrs.get("is_key"):
        return ""
    # Every key on the path counts: {"assistantConfig": {"mensaje": "…"}} is configuration too.
    pointer = (unit.locator or "").split("]", 1)[-1]
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if key.isdigit() or key in _SCHEMA_ORG_OK:
            continue
        if _CONFIG_KEY.search(key):
            return f'invented key "{key}" outside the schema.org vocabulary'
    return ""


# A meta tag's name or a data-* attribute's name that names an AI reader or its configuration. Read as the loader
# gives attribute names (lower case: `data-aiNote` arrives as `data-ainote`), in words of letters and digits: one
# of them one of these words, or one of the prefixes glued to a configuration word ("ainote", "llmhint",
# "paraia"). Narrower than `_CONFIG_KEY`: words such as "system" name many ordinary things in attribute names
# (Drupal's `data-drupal-link-system-path` on 63 of the 545 benign and real pages), none of these does.
AI_NAME_WORDS = ("ai", "ia", "genai", "llm", "llms", "gpt", "chatgpt", "assistant", "assistants", "asistente",
                 "asistentes", "chatbot", "chatbots", "crawler", "crawlers", "summarizer", "summariser")
# Alone, "agent" (a support agent), "model" (a product's), "bot", "prompt" (a cookie prompt) and "instructions" (a
# form's) name ordinary things; glued to a configuration word, or "for"/"para" glued to a reader, they do not.
AI_NAME_PREFIXES = ("ai", "ia", "llm", "gpt", "genai", "assistant", "asistente", "agent", "agente", "model", "modelo",
                    "chatbot", "bot", "for", "para", "parala")
AI_NAME_CONFIG = ("note", "notes", "nota", "notas", "instruction", "instructions", "instrucciones", "prompt",
                  "prompts", "hint", "hints", "guidance", "guide", "summary", "resumen", "directive", "directives",
                  "directiva", "policy", "politica", "context", "contexto", "config", "rules", "reglas", "message",
                  "mensaje", "msg", "memo", "notice", "aviso", "ai", "ia", "llm", "llms", "agents", "bots", "models")
# Every word `ai_name` takes: the words alone and each prefix glued to a configuration word.
AI_NAMES = frozenset(AI_NAME_WORDS) | frozenset(p + c for p in AI_NAME_PREFIXES for c in AI_NAME_CONFIG)
_NAME_WORD = re.compile(r"[a-z0-9]+")
_META_NAMING = ("name", "property", "http-equiv", "itemprop")


def ai_name(name: str) -> bool:
    """Whether an attribute or meta name names an AI reader or its configuration (`ai-instructions`, `aiNote`,
    `llm:summary`, `note-for-ai`); the prefilter's screen (`prefilter._AI_NAMED`) is built from the same AI_NAMES."""
    return any(w in AI_NAMES for w in _NAME_WORD.findall(name.lower()))


def ai_named_attribute(unit, doc) -> str:
    """A `<meta content>` whose name (or property, http-equiv, itemprop) names an AI reader or its configuration
    (`ai-instructions`, `llm:summary`, `assistant-guidance`), or a `data-*` attribute named so (`data-ai-note`): no
    reader but a machine looks there, whatever the value says of its addressee."""
    if unit.channel != Channel.ATTRIBUTE or unit.element is None:
        return ""
    tag, _, attr = unit.locator.partition("@")
    if attr == "content" and tag == "meta":
        for key in _META_NAMING:
            value = unit.element.attrs.get(key)
            if value and ai_name(value):
                return f'<meta {key}="{value[:60]}"> names an AI reader'
        return ""
    if attr.startswith("data-") and ai_name(attr[5:]):
        return f"attribute {attr[:60]} names an AI reader"
    return ""


def json_value(unit, doc) -> str:
    """A JSON string value (not an object key)."""
    return "" if unit.attrs.get("is_key") else "value"


# Predicates that look a name or a key up and read no text: a rule whose predicates are all among them is judged
# by them before its signal is searched (engine.InjectionScanner.predicates_first).
CHEAP_PREDICATES = frozenset({"jsonld_config_key", "ai_named_attribute", "json_value"})

PREDICATES = {
    "css_hidden": css_hidden,
    "not_css_hidden": not_css_hidden,
    "pdf_invisible": pdf_invisible,
    "not_pdf_invisible": not_pdf_invisible,
    "ocr_layer": ocr_layer,
    "bidi_override": bidi_override,
    "jsonld_config_key": jsonld_config_key,
    "ai_named_attribute": ai_named_attribute,
    "json_value": json_value,
}
