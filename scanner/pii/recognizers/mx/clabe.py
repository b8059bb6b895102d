"""CLABE (Clave Bancaria Estandarizada): 18 digits, the 3-7-1 check digit, and whose account it is.

python-stdnum has no CLABE module and the `clabe` package is not a dependency; the published algorithm is a
few lines (`clabe_check_digit`): weights 3, 7, 1 over the first 17 digits, each product mod 10, check =
(10 − sum mod 10) mod 10 (Banxico; cuenca-mx/clabe-python `compute_control_digit`).

Beyond Presidio's shape, two hooks the rule's policy names: in visible text a known bank code (the first three
digits, `clabe_bank_codes` in scanner/rules/pii/context.yaml) stands in for a context word
(`context_substitute`), and a CLABE next to a company's legal form or RFC is the company's account, reported
and kept (`owner`).
"""

from __future__ import annotations

import re

from scanner.pii.channels import VISIBLE_CHANNELS
from scanner.pii.data import context_rules
from scanner.pii.recognizer import Pattern, PatternRecognizer
from scanner.pii.recognizers.mx.rfc import RFC_MORAL, rfc_info
from scanner.textfold import fold_accents

CLABE_RE = r"(?<![\d.,\-/])\d(?:[ \-]?\d){17}(?![ \-]?\d)(?![.,/]\d)"
CLABE_WEIGHTS = (3, 7, 1) * 6
OWNER_BEFORE, OWNER_AFTER = 160, 120      # characters of the block around the CLABE that say whose it is
_LEGAL_FORM = re.compile(r"\b(?:S\.?\s?A\.?|S\.? de R\.?L\.?|A\.C\.)")


def clabe_check_digit(first17: str) -> str:
    """The control digit of a CLABE's first 17 digits."""
    if len(first17) != 17 or not first17.isdigit():
        raise ValueError("a CLABE check digit needs exactly 17 digits")
    total = sum((int(c) * w) % 10 for c, w in zip(first17, CLABE_WEIGHTS))
    return str((10 - total % 10) % 10)


def clabe_valid(digits: str) -> bool:
    return len(digits) == 18 and digits.isdigit() and clabe_check_digit(digits[:17]) == digits[17]


class MxClabeRecognizer(PatternRecognizer):
    ENTITY = "MX_CLABE"
    PATTERNS = (Pattern("CLABE", CLABE_RE, 0.2),)
    CONTEXT = ("clabe", "cuenta clabe", "interbancaria", "spei", "transferencia", "transferencias", "deposito",
               "depositos", "cuenta", "banco", "bancaria", "beneficiario")

    def validate_result(self, pattern_text: str):
        return None if clabe_valid(re.sub(r"\D", "", pattern_text)) else False

    def context_substitute(self, text: str, channel) -> tuple[bool, dict]:
        """(a known bank code in visible text stands for a context word, what the finding records)."""
        bank = re.sub(r"\D", "", text)[:3] in context_rules().clabe_bank_codes
        return bank and channel in VISIBLE_CHANNELS, {"bank_code_known": bank}

    def owner(self, block_text: str, start: int, end: int) -> str:
        """"company" when a legal form with a company marker, or a company's RFC, sits around the account."""
        window = block_text[max(0, start - OWNER_BEFORE):end + OWNER_AFTER]
        if context_rules().company_markers.search(fold_accents(window)) and _LEGAL_FORM.search(window):
            return "company"
        for m in RFC_MORAL.finditer(window):
            info = rfc_info(m.group(0))
            if info is not None and info.kind == "moral":
                return "company"
        return "person"
