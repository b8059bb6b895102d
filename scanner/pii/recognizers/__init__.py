"""The recognizers of personal data, one small module each, in Presidio's shape (`scanner.pii.recognizer`).

Each names its entity, its patterns with their scores, its context words and a `validate_result` check from
a maintained library; the rule that uses it is a YAML record in `scanner/rules/pii/` (`recognizer:` names the
class), so a new identifier is one YAML file and one module here (the Mexican ones under `mx/`).

| recognizer | entity | pattern | validate_result |
|---|---|---|---|
| mx.curp.MxCurpRecognizer | MX_CURP | 4 letters, YYMMDD, H/M, 5 letters, 1 alnum, 1 digit | True iff stdnum.mx.curp validates (check digit) |
| mx.rfc.MxRfcFisicaRecognizer | MX_RFC_PERSONA_FISICA | 4 letters, YYMMDD, 3-char homoclave (or none) | stdnum.mx.rfc: True with a valid check digit, None without (context needed), False otherwise or for XAXX010101000 / XEXX010101000 |
| mx.rfc.MxRfcMoralRecognizer | MX_RFC_PERSONA_MORAL | 3 letters, YYMMDD, homoclave | same, 12 characters |
| mx.nss.MxNssRecognizer | MX_NSS | 11 digits | None iff Luhn holds (always needs context), else False |
| mx.clabe.MxClabeRecognizer | MX_CLABE | 18 digits | None iff the 3-7-1 check digit holds, else False |
| mx.ine.MxIneClaveRecognizer | MX_INE_CLAVE | 6 letters, 8 digits, H/M, 3 digits | None iff date and state are valid, else False |
| mx.phone.MxPhoneRecognizer | PHONE_NUMBER | MX national, +52, +52 1, 044/045/01 forms; other +CC numbers | phonenumbers validity: True, None for an unseparated 10-digit run, False |
| email.OfflineEmailRecognizer | EMAIL_ADDRESS | practical address shape (+ "arroba"/[at] forms) | suffix known to tldextract's bundled list, never downloaded |

All patterns but the email's are case-sensitive.
"""
