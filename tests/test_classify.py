"""Capture kinds of the spec's catalogue (classes 2 and 3): the classifier's judgement on small pages and PDFs
written here, on the real third-party files, and `manifest verify`'s missing_capture_kind warning."""

from __future__ import annotations

import base64
import json

import pytest

from conftest import EXAMPLE_TREE, REALDATA, realdata_files
from scanner.fixtures import classify as classify_module
from scanner.fixtures.classify import CATALOGUE, Classifier, classify_file, classify_tree
from scanner.fixtures.classify_pdf import sample_pages
from scanner.fixtures.verify import capture_files, capture_kinds_check, verify_tree
from scanner.fixtures.tree import read_manifest
from scanner.loaders.pdf import load_pdf
from scanner.pdfwriter import TextRun, make_pdf
from scanner.units import LoadError
from treefactory import build_tree, edit_manifest, sha, write_json


def classify_html_text(tmp_path, html: str, name: str = "page.html"):
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    return classify_file(path, name)


def classify_pdf_bytes(tmp_path, data: bytes, name: str = "doc.pdf"):
    path = tmp_path / name
    path.write_bytes(data)
    return classify_file(path, name)


PROSE = ("La planta de Apodaca opera tres líneas de sólidos orales y una de líquidos; en julio renovó su "
         "certificado de buenas prácticas de fabricación. ") * 20


# --- HTML -------------------------------------------------------------------------------------------------

def test_spa_shell_is_js_shell_with_its_signals(tmp_path):
    c = classify_html_text(tmp_path, '<!doctype html><html><head><title>Distribuidores</title></head><body>'
                           '<div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>'
                           '<script src="/static/js/main.1a2b.js"></script></body></html>')
    assert c.format == "html" and c.kinds == ["js_shell"]
    assert c.evidence == {"js_shell": [
        "0 characters of visible content text (a shell holds under 1,500)",
        'app mount node <div id="root"> holding 0 characters of visible text',
        "<noscript> asks for JavaScript: 'need to enable JavaScript'"]}


def test_server_rendered_app_is_not_a_shell(tmp_path):
    c = classify_html_text(tmp_path, f'<html><body><div id="__next"><main><p>{PROSE}</p></main></div>'
                           '<script src="/_next/static/chunks/main.js"></script></body></html>')
    assert c.kinds == ["corporate"]


def test_empty_main_with_skeleton_and_little_text_is_js_shell(tmp_path):
    c = classify_html_text(tmp_path, '<html><body><nav><a href="/">Inicio</a> <a href="/derecho">Derecho</a></nav>'
                           '<main id="portada"><div class="skeleton-noticia"></div></main>'
                           '<footer>Editora Perú, Lima</footer></body></html>')
    assert c.kinds == ["js_shell"]
    assert c.evidence["js_shell"][1:] == ['<main id="portada"> holds 0 characters of visible text',
                                          'loading placeholder <div class="skeleton-noticia">']


def test_schema_org_partial_paywall(tmp_path):
    ld = {"@context": "https://schema.org", "@type": "NewsArticle", "isAccessibleForFree": "False",
          "hasPart": {"@type": "WebPageElement", "isAccessibleForFree": False, "cssSelector": ".contenido-restringido"}}
    c = classify_html_text(tmp_path, f'<html><head><script type="application/ld+json">{json.dumps(ld)}</script></head>'
                           f'<body><article><p>{PROSE[:300]}</p><div class="contenido-restringido">…</div></article>'
                           '</body></html>')
    assert c.kinds == ["paywall_partial"]
    assert c.evidence["paywall_partial"] == ["JSON-LD NewsArticle isAccessibleForFree: 'False'",
                                             "JSON-LD part '.contenido-restringido' isAccessibleForFree: false"]


def test_paywall_class_on_the_article_container(tmp_path):
    c = classify_html_text(tmp_path, f'<html><body><article id="n1" class="node paywall-on"><p>{PROSE}</p></article>'
                           '</body></html>')
    assert c.kinds == ["paywall_partial"]
    assert c.evidence["paywall_partial"][0].startswith(
        'paywall markup on the article container <article id="n1" class="node paywall-on">')


def test_subscribe_link_in_menu_and_paywalled_teaser_are_not_a_paywall(tmp_path):
    c = classify_html_text(tmp_path, '<html><body><nav><a href="/s">Suscríbete</a></nav>'
                           f'<article><p>{PROSE}</p></article>'
                           '<aside><div class="teaser paywall-badge"><a href="/otra">Otra nota</a></div></aside>'
                           '</body></html>')
    assert c.kinds == ["corporate"]


def test_paywall_markup_beside_a_subscribe_prompt_in_the_content(tmp_path):
    c = classify_html_text(tmp_path, f'<html><body><article><p>{PROSE[:400]}</p></article>'
                           '<div class="piano-offer"><p>Para seguir leyendo hazte suscriptor.</p></div></body></html>')
    assert c.kinds == ["paywall_partial"]
    assert c.evidence["paywall_partial"] == ["paywall markup: piano-offer",
                                             "subscribe prompt in the content text: 'Para seguir leyendo'"]


def test_government_table_is_table_heavy(tmp_path):
    rows = "".join(f"<tr><td>{i}</td><td>Laboratorio {i}</td><td>Registro {100 + i}M2026 SSA</td></tr>"
                   for i in range(1, 9))
    c = classify_html_text(tmp_path, '<html><body><h1>Registros sanitarios</h1><table><tr><th>#</th><th>Titular</th>'
                           f'<th>Registro</th></tr>{rows}</table><p>Fuente: COFEPRIS.</p></body></html>')
    assert c.kinds == ["table_heavy"]
    assert c.evidence["table_heavy"] == [
        "89% of the visible text (296 of 333 characters) is in 1 data table with 9 rows of 2+ filled cells"]


def test_layout_grid_of_long_teasers_is_not_table_heavy(tmp_path):
    cell = "<td>" + PROSE[:160] + "</td>"
    c = classify_html_text(tmp_path, f'<html><body><table>{("<tr>" + cell * 3 + "</tr>") * 6}</table></body></html>')
    assert "table_heavy" not in c.kinds


def test_news_article_is_not_the_corporate_page(tmp_path):
    ld = {"@context": "https://schema.org", "@type": "NewsArticle", "headline": "Planta nueva"}
    c = classify_html_text(tmp_path, f'<html><head><script type="application/ld+json">{json.dumps(ld)}</script>'
                           f'</head><body><article><p>{PROSE}</p></article></body></html>')
    assert c.kinds == ["article"] and c.evidence == {"article": ["schema.org type NewsArticle"]}


def test_plain_company_page_is_corporate(tmp_path):
    c = classify_html_text(tmp_path, f'<html><body><header><a href="/">Aceros del Bajío</a></header>'
                           f'<main><h1>Contacto</h1><p>{PROSE}</p></main><footer>© 2026</footer></body></html>')
    assert c.kinds == ["corporate"]


def test_empty_html_cannot_be_classified(tmp_path):
    c = classify_html_text(tmp_path, "   \n")
    assert (c.format, c.kinds, c.error) == ("html", [], "empty HTML: nothing to classify")


# --- PDF --------------------------------------------------------------------------------------------------

def test_text_pdf_has_no_catalogue_kind(tmp_path):
    c = classify_pdf_bytes(tmp_path, make_pdf([[TextRun("Informe anual 2025 de Acme")]]))
    assert (c.format, c.kinds, c.page_count, c.pages_examined) == ("pdf", [], 1, [1])


def test_scan_without_text_layer_is_scanned_and_fails_the_loader(tmp_path):
    data = make_pdf([[]], image_pages={0})
    with pytest.raises(LoadError) as err:
        load_pdf(data, "scan.pdf")
    assert err.value.code == "format_tables_ocr"
    c = classify_pdf_bytes(tmp_path, data)
    assert c.kinds == ["scanned"]
    assert c.evidence == {"scanned": ["1 of 1 page is a page image: 1 without a text layer, 0 with only an OCR layer",
                                      "no page has a text layer: the loader reports it as format_tables_ocr"]}


def test_scan_with_an_invisible_ocr_layer_is_scanned(tmp_path):
    page = [TextRun("Periódico Oficial del Estado", render_mode=3), TextRun("Decreto número 61", y=700, render_mode=3)]
    c = classify_pdf_bytes(tmp_path, make_pdf([page, page], image_pages={0, 1}))
    assert c.kinds == ["scanned"]
    assert c.evidence["scanned"] == ["2 of 2 pages are page images: 0 without a text layer, 2 with only an OCR layer"]


def test_visible_text_beside_a_photo_is_not_a_scan(tmp_path):
    c = classify_pdf_bytes(tmp_path, make_pdf([[TextRun("Texto visible sobre la foto " * 3)]], image_pages={0}))
    assert c.kinds == []


def test_two_column_table_is_multi_column_table(tmp_path):
    rows = [TextRun(t, x=x, y=700 - 18 * i, size=10) for i, cells in enumerate(
        [("Segmento", "Ventas 2025"), ("Alimentos y bebidas", "1,245.8"), ("Cuidado personal", "612.3"),
         ("Farmacéutico", "388.9"), ("Industrial", "274.5"), ("Total", "2,521.5")]) for t, x in zip(cells, (72, 380))]
    c = classify_pdf_bytes(tmp_path, make_pdf([rows]))
    assert c.kinds == ["multi_column_table"]
    assert c.evidence["multi_column_table"] == [
        "1 of 1 examined pages with text set text in aligned columns (≥4 rows of 2+ cells sharing column edges)",
        "page 1: 6 of 6 rows, column edges at x≈72, 380"]


def test_bulleted_list_is_not_a_table(tmp_path):
    items = [r for i in range(8) for r in (TextRun("•", x=72, y=700 - 16 * i, size=10),
                                          TextRun(f"Punto {i} del informe", x=84, y=700 - 16 * i, size=10))]
    assert classify_pdf_bytes(tmp_path, make_pdf([items])).kinds == []


@pytest.mark.parametrize("pages, kinds", [(100, []), (101, ["long_report"])])
def test_long_report_is_more_than_100_pages(tmp_path, pages, kinds):
    c = classify_pdf_bytes(tmp_path, make_pdf([[TextRun(f"Página {n}")] for n in range(1, pages + 1)]))
    assert (c.kinds, c.page_count) == (kinds, pages)
    assert len(c.pages_examined) == 8 and c.pages_examined[0] == 1 and c.pages_examined[-1] == pages


def test_sample_pages_spread_evenly():
    assert sample_pages(5) == [0, 1, 2, 3, 4]
    assert sample_pages(101) == [0, 14, 29, 43, 57, 71, 86, 100]


def test_broken_pdf_is_an_error_not_a_kind(tmp_path):
    c = classify_pdf_bytes(tmp_path, b"%PDF-1.4\nnot really a pdf\n")
    assert c.format == "pdf" and c.kinds == [] and c.error.startswith("broken PDF")


# --- envelopes and the cache ------------------------------------------------------------------------------

def test_envelope_bodies_are_classified_like_the_files(tmp_path):
    pdf = make_pdf([[]], image_pages={0})
    html = '<html><body><div id="app"></div><noscript>Activa JavaScript para continuar.</noscript></body></html>'
    write_json(tmp_path / "f-pdf.json", {"request": {"method": "GET", "url": "https://x.test/a.pdf"},
                                         "response": {"status": 200, "headers": {"content-type": "application/pdf"},
                                                      "body": base64.b64encode(pdf).decode(), "body_encoding": "base64"}})
    write_json(tmp_path / "f.json", {"request": {"method": "GET", "url": "https://x.test/"},
                                     "response": {"status": 200, "headers": [["Content-Type", "text/html; charset=utf-8"]],
                                                  "body": html}})
    write_json(tmp_path / "search.json", {"request": {}, "response": {"status": 200, "headers": {}, "body": {"results": []}}})
    write_json(tmp_path / "h.har", {"log": {"entries": [{"request": {"method": "GET", "url": "https://x.test/"},
                                                         "response": {"status": 200, "headers": [],
                                                                      "content": {"mimeType": "text/html", "text": html}}}]}})
    write_json(tmp_path / "timeout.json", {"request": {"method": "GET", "url": "https://x.test/"}, "response": None,
                                           "error": {"type": "timeout", "after_ms": 30000}})
    assert classify_file(tmp_path / "h.har").kinds == ["js_shell"]
    assert classify_file(tmp_path / "timeout.json").error == "no response was recorded"
    assert classify_file(tmp_path / "f-pdf.json").kinds == ["scanned"]
    assert classify_file(tmp_path / "f.json").kinds == ["js_shell"]
    other = classify_file(tmp_path / "search.json", "search.json")
    assert (other.format, other.kinds, other.error) == (None, [], "response body is JSON, not HTML or PDF")


def test_one_body_is_classified_once_per_classifier(tmp_path, monkeypatch):
    calls = []
    real = classify_module.classify_pdf
    monkeypatch.setattr(classify_module, "classify_pdf", lambda data, path: calls.append(path) or real(data, path))
    pdf = make_pdf([[TextRun("Uno")]])
    (tmp_path / "a.pdf").write_bytes(pdf)
    write_json(tmp_path / "b.json", {"request": {}, "response": {"status": 200, "headers": {"content-type": "application/pdf"},
                                                                 "body": base64.b64encode(pdf).decode(), "body_encoding": "base64"}})
    classifier = Classifier()
    first = classifier.classify_file(tmp_path / "a.pdf", "a.pdf")
    second = classifier.classify_file(tmp_path / "b.json", "b.json")
    assert calls == ["a.pdf"]
    assert (first.path, second.path, second.page_count) == ("a.pdf", "b.json", 1)


# --- manifest verify ----------------------------------------------------------------------------------------

def test_verify_warns_each_missing_kind_per_provider_and_class(tmp_path):
    tree = build_tree(tmp_path / "tree")      # each provider: a plain page (gs-002) and a one-page PDF (gs-003)
    report = verify_tree(tree, content=False, extra_checks=(capture_kinds_check,))
    assert report.ok and report.problems == []
    got = sorted((w.path, w.code, w.message.split(" include no ")[1].split(";")[0]) for w in report.warnings)
    missing = ["JavaScript-rendered SPA (js_shell)", "press note with a partial paywall (paywall_partial)",
               "government table (table_heavy)", "annual report over 100 pages (long_report)",
               "scanned official bulletin (scanned)", "two-column table PDF (multi_column_table)"]
    assert got == sorted((p, "missing_capture_kind", m) for p in ("alpha", "beta") for m in missing)
    assert report.captures["_shared/html/acme.html"]["kinds"] == ["corporate"]
    assert report.captures["_shared/pdf/informe.pdf"] == {"format": "pdf", "kinds": [], "evidence": {},
                                                          "page_count": 1, "pages_examined": [1]}
    assert report.to_json()["warnings"][0]["code"] == "missing_capture_kind"


def test_provider_set_is_its_own_files_and_the_shared_files_of_their_cases(tmp_path):
    tree = build_tree(tmp_path / "tree")
    entries = read_manifest(tree).entries
    assert capture_files("alpha", "html", entries) == ["alpha/fetch/gs-002.json", "_shared/html/acme.html"]
    assert capture_files("alpha", "pdf", entries) == ["alpha/fetch/gs-003-pdf.json", "_shared/pdf/informe.pdf"]

    def other_case(files):
        files["alpha/fetch/gs-002.json"]["case"] = "gs-009"
    edit_manifest(tree, other_case)
    assert capture_files("alpha", "html", read_manifest(tree).entries) == ["alpha/fetch/gs-002.json"]


def test_a_shared_table_page_of_the_providers_case_counts(tmp_path):
    tree = build_tree(tmp_path / "tree")
    rows = "".join(f"<tr><td>{i}</td><td>Laboratorio {i}</td><td>{100 + i}M2026 SSA</td></tr>" for i in range(9))
    page = tree / "_shared/html/acme.html"
    page.write_text(f"<html><body><table>{rows}</table></body></html>", encoding="utf-8")
    edit_manifest(tree, lambda f: f["_shared/html/acme.html"].update(sha256=sha(page), sha256_original=sha(page)))
    report = verify_tree(tree, content=False, extra_checks=(capture_kinds_check,))
    kinds = {w.message.split(" include no ")[1].split(";")[0] for w in report.warnings if w.path == "alpha"}
    assert "government table (table_heavy)" not in kinds
    assert "simple corporate site (corporate)" in kinds


def test_example_tree_holds_every_catalogue_kind_for_each_provider():
    report = verify_tree(EXAMPLE_TREE, content=False, extra_checks=(capture_kinds_check,))
    assert report.warnings == []
    entries = read_manifest(EXAMPLE_TREE).entries
    for provider in report.providers:
        for cls, catalogue in CATALOGUE.items():
            own = [rel for rel in capture_files(provider, cls, entries) if rel.startswith(provider + "/")]
            kinds = {k for rel in own for k in report.captures[rel]["kinds"]}
            assert set(catalogue) <= kinds, (provider, cls, kinds)
    assert report.captures["_shared/pdf/lsm-informe-anual-2025.pdf"]["page_count"] == 104


def test_classify_tree_lists_html_and_pdf_entries():
    found = classify_tree(EXAMPLE_TREE)
    assert found["_shared/pdf/po-guanajuato-2026-03-27-escaneado.pdf"].kinds == ["scanned"]
    assert found["exa/fetch/gs-011-pdf.json"].kinds == ["scanned"]
    assert "_shared/html/inj-html-comment.html" not in found          # class prompt-injection
    assert all(c.format in ("html", "pdf") and c.error is None for c in found.values())


# --- real third-party files (../shared/realdata) ------------------------------------------------------------

REAL_HTML = {
    "traf__siegfried-marcus-berufsschule.at.kft.html": ["table_heavy"],
    "traf__leichtathletik-ostalbkreis.de.1952007.html": ["table_heavy"],
    "traf__elperuanoa.pe-logran.html": ["js_shell"],
    "traf__lanouvellerepublique.fr.martin.html": ["js_shell"],
    "traf__scmp.com.playbook.html": ["js_shell", "paywall_partial"],
    "traf__clarin.com-albertofernandez.html": ["paywall_partial"],
    "traf__elnuevoherald.com-miami.html": ["paywall_partial"],
    "traf__emotion.de.selfcare.html": ["article"],          # an empty #root widget beside a server-rendered article
    "traf__lidl.de-nachhaltigkeit.html": ["corporate"],     # Nuxt, rendered on the server
    "traf__fairkom.eu.about.html": ["corporate"],
    "traf__rs-ingenieure.de.tragwerksplanung.html": ["corporate"],
}
REAL_PDF = {
    "ocrmypdf__linn.pdf": (["scanned"], 1),
    "ocrmypdf__graph_ocred.pdf": (["scanned"], 1),
    "plumber__pr-136-example.pdf": (["scanned"], 6),
    "tabula__argentina_diputados_voting_record.pdf": (["multi_column_table"], 1),
    "mx_ssa__Tabla_casos_positivos_COVID-19_2020.03.22.pdf": (["multi_column_table"], 7),
    "mx_ssa__Tabla_casos_sospechosos_COVID-19_2020.03.25.pdf": (["multi_column_table"], 30),
    "plumber__WARN-Report-2015-2016.pdf": (["multi_column_table"], 16),
    "plumber__federal-register-2020-17221.pdf": (["multi_column_table"], 15),
    "pdfminer__issue-1061-soria-comas-idp.pdf": (["multi_column_table"], 12),
    "plumber__chelsea_pdta.pdf": ([], 65),               # a 65-page report: long, but not over 100 pages
    "mx_ssa__Comunicado_Tecnico_Diario_COVID-19_2020.03.16.pdf": ([], 2),
}


def test_linn_scan_without_text_layer_fails_as_format_tables_ocr():
    path = REALDATA / "pdf" / "ocrmypdf__linn.pdf"
    if not path.is_file():
        pytest.skip("../shared/realdata/pdf/ocrmypdf__linn.pdf is not present")
    with pytest.raises(LoadError) as err:
        load_pdf(path.read_bytes(), path.name)
    assert (err.value.code, err.value.message) == (
        "format_tables_ocr", "scanned PDF with no text layer: needs OCR (format_tables_ocr)")
    c = classify_file(path, path.name)
    assert (c.kinds, c.page_count) == (["scanned"], 1)
    assert c.evidence["scanned"][-1] == "no page has a text layer: the loader reports it as format_tables_ocr"


def test_every_real_page_classifies_and_the_clear_ones_as_judged():
    files = realdata_files("html")
    if not files:
        pytest.skip("../shared/realdata/html is not present")
    classifier = Classifier()
    got = {p.name: classifier.classify_file(p, p.name) for p in files}
    assert all(c.format == "html" and c.kinds and c.error is None for c in got.values())
    assert {name: got[name].kinds for name in REAL_HTML} == REAL_HTML


def test_every_real_pdf_classifies_as_judged():
    files = realdata_files("pdf")
    if not files:
        pytest.skip("../shared/realdata/pdf is not present")
    got = {p.name: classify_file(p, p.name) for p in files}
    assert {name: (c.kinds, c.page_count) for name, c in got.items()} == REAL_PDF


def test_warning_counts_captures_that_could_not_be_classified(tmp_path):
    tree = build_tree(tmp_path / "tree")
    pdf = tree / "_shared/pdf/informe.pdf"
    pdf.write_bytes(b"%PDF-1.4\nbroken\n")
    edit_manifest(tree, lambda f: f["_shared/pdf/informe.pdf"].update(sha256=sha(pdf), sha256_original=sha(pdf)))
    report = verify_tree(tree, content=False, extra_checks=(capture_kinds_check,))
    scanned = [w.message for w in report.warnings if w.path == "alpha" and "(scanned)" in w.message.split(";")[0]]
    assert scanned == ["provider alpha's pdf captures (2 files, 2 of them could not be classified) include no scanned "
                       "official bulletin (scanned); the spec's catalogue asks for: annual report over 100 pages "
                       "(long_report); scanned official bulletin (scanned); two-column table PDF (multi_column_table)"]
    assert report.captures["_shared/pdf/informe.pdf"]["error"].startswith("broken PDF")
    # the factory's fetch envelope of class pdf records a JSON body
    assert report.captures["alpha/fetch/gs-003-pdf.json"]["error"] == "response body is JSON, not HTML or PDF"
