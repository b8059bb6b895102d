"""Secrets in recorded fixtures: API keys, tokens, authorization headers, cookies, provider account ids.

Rules are data (`scanner/rules/secrets/*.yaml`, model in `scanner.secrets.rules`); `SecretScanner.scan(doc)`
returns findings of kind `secret` whose span is exactly what the redactor replaces with `REDACTED`.
"""

from scanner.secrets.detect import SecretScanner
from scanner.secrets.rules import BUILTIN_SECRET_RULES, SecretRule, load_rules

__all__ = ["SecretScanner", "SecretRule", "load_rules", "BUILTIN_SECRET_RULES"]
