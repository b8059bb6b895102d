"""The training and measurement material, read from ../shared and the project's corpus (never copied).

Every text comes with its source (the leave-one-source-out folds are by source), its language and its label.
Benign pages are read with the scanner's HTML loader and cut into the same windows, in the same channel
groups, as the learned rule scores at scan time.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from scanner.rulepack import BUILTIN_RULES

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("CENTINELA_SHARED") or REPO.parent / "shared")
TRAINING = SHARED / "training"
REALDATA = SHARED / "realdata"
CORPUS = REPO / "corpus"
HELDOUT = CORPUS / "heldout_texts.jsonl"
LEXICON = BUILTIN_RULES / "injection" / "lexicon.yaml"   # a training input: corpus windows follow its findings
BLIND_DIR = CORPUS / "blind"                   # one file a split: dev.jsonl and TRAINING_SPLITS train; the others
                                               # never do
# The splits of corpus/blind/ that train beside `dev`: the older blind splits, each measured once and read since, and
# the batches written to train (written5 … written10): `blind` … `blind10`, written5 and written6 since the twenty-first
# round, `blind11` … `blind14` and written7 since the twenty-second, `blind15` … `blind22` and written8 since the
# thirtieth (their benign texts alone, as hard negatives, in the twenty-eighth and twenty-ninth, through a list of
# benign-only splits removed once empty), `blind23` … `blind25` and written9 since the thirty-second, `blind26`,
# written10 and `blind27` since the thirty-fourth, `blind33` since the fortieth, `blind34` since the forty-first,
# `blind35` since the forty-second, `blind36` since the forty-third, `blind37` since the forty-fourth, `blind38` since
# the forty-fifth, `blind39` since the forty-sixth, `blind40` since the forty-seventh, `blind41` since the
# forty-eighth, `blind42` … `blind44` since the fifty-first.
# Texts written blind by helpers are the material closest to what issue 13 is judged on; once read they no longer
# estimate anything, so they teach. No text of blind28, blind29 or a split kept unread ever trains: bench/blind_probe.py
# measures on them.
TRAINING_SPLITS = ("blind", "blind2", "blind3", "blind4", "blind5", "blind6", "blind7", "blind8", "blind9", "blind10",
                   "blind11", "blind12", "blind13", "blind14", "written5", "written6", "written7",
                   "blind15", "blind16", "blind17", "blind18", "blind19", "blind20", "blind21", "blind22", "written8",
                   "blind23", "blind24", "blind25", "written9", "blind26", "written10", "blind27", "blind33",
                   "blind34", "blind35", "blind36", "blind37", "blind38", "blind39", "blind40", "blind41",
                   "blind42", "blind43", "blind44")
WRITTEN_DIR = CORPUS / "written"               # attacks and benign hidden texts written to train: es-N.jsonl, en-N.jsonl

ATTACK_SOURCES = ("tensor-trust-extraction", "tensor-trust-hijacking", "llm-guard", "bipia", "greshake",
                  "purplellama-english", "purplellama-spanish", "spikee", "corpus")
BENIGN_HELD_APART = 5          # one benign page in five never trains: page-level false positives are measured on them


@dataclass(frozen=True)
class Text:
    text: str
    label: int                 # 1 injection, 0 benign
    source: str
    language: str              # es | en | other
    ident: str


def available() -> bool:
    return (TRAINING / "injection_texts.jsonl").is_file()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _lang(text: str) -> str:
    t = f" {text.lower()} "
    es = sum(t.count(w) for w in (" el ", " la ", " de ", " que ", " los ", " las ", " por ", " para ", " una ", " es "))
    en = sum(t.count(w) for w in (" the ", " and ", " you ", " to ", " of ", " is ", " your ", " a ", " in ", " that "))
    if es == en == 0:
        return "other"
    return "es" if es > en else "en"


def jsonl_lines(path: Path) -> list[str]:
    """The non-blank lines of a JSON Lines file ([] when it is absent), split on "\n" only: str.splitlines() would
    also cut at a U+2028 inside a JSON string."""
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()] if path.is_file() else []


def jsonl_rows(path: Path) -> list[dict]:
    """The objects of a JSON Lines file, one per non-blank line."""
    return [json.loads(line) for line in jsonl_lines(path)]


def attack_texts() -> list[Text]:
    """Every attack (and benign prompt) text of ../shared, by source."""
    out: list[Text] = []
    for row in jsonl_rows(TRAINING / "injection_texts.jsonl"):
        source = "llm-guard" if row["source"].startswith("llm-guard") else row["source"]
        out.append(Text(row["text"], int(row["label"] == "injection"), source, _lang(row["text"]), row["id"]))
    inj = REALDATA / "injection"
    p = inj / "bipia__text_attack_test.json"
    if p.is_file():
        for cat, items in sorted(json.loads(p.read_text(encoding="utf-8")).items()):
            for k, t in enumerate(items):
                out.append(Text(t, 1, "bipia", "en", f"bipia-{cat}-{k}"))
    for p in sorted(inj.glob("greshake__*.txt")) if inj.is_dir() else []:
        out.append(Text(p.read_text(encoding="utf-8"), 1, "greshake", "en", p.stem))
    for name, source in (("purplellama__pi_english_indirect_subset.json", "purplellama-english"),
                         ("purplellama__pi_multilingual_spanish_subset.json", "purplellama-spanish")):
        p = inj / name
        if p.is_file():
            for row in json.loads(p.read_text(encoding="utf-8")):
                lang = "es" if source.endswith("spanish") else "en"
                out.append(Text(row["user_input"], 1, source, lang, f"{source}-{row['prompt_id']}"))
    jb, ins = inj / "spikee__cybersec-2025-04_jailbreaks_subset.jsonl", inj / "spikee__cybersec-2025-04_instructions.jsonl"
    if jb.is_file() and ins.is_file():
        jails, instr = jsonl_rows(jb), jsonl_rows(ins)
        for i, j in enumerate(jails):
            for k in (i * 7 % len(instr), (i * 13 + 5) % len(instr)):
                text = j["text"].replace("<INSTRUCTION>", instr[k]["instruction"])
                lang = j.get("lang") or instr[k].get("lang") or "en"
                out.append(Text(text, 1, "spikee", "en" if lang == "en" else "other", f"spikee-{j['id']}-{instr[k]['id']}"))
    return out


def notinject() -> list[Text]:
    p = REALDATA / "injection" / "injecguard__NotInject_one.json"
    if not p.is_file():
        return []
    rows = json.loads(p.read_text(encoding="utf-8"))
    return [Text(r["prompt"], 0, "notinject", _lang(r["prompt"]), f"notinject-{k}") for k, r in enumerate(rows)]


def bipia_emails() -> list[Text]:
    rows = jsonl_rows(REALDATA / "injection" / "bipia__email_test.jsonl")
    return [Text(r["context"], 0, "bipia-emails", "en", f"bipia-email-{k}") for k, r in enumerate(rows)]


def heldout_texts() -> list[Text]:
    """Texts written for centinela that never train: the generalisation estimate of bench-injection."""
    return [Text(r["text"], int(r["label"] == "injection"), "heldout-" + r["kind"], r["language"], r["id"])
            for r in jsonl_rows(HELDOUT)]


def blind_files() -> list[Path]:
    """The split files of `corpus/blind/` (`dev.jsonl`, `blind.jsonl`, `blind2.jsonl`, …), by name."""
    return sorted(BLIND_DIR.glob("*.jsonl")) if BLIND_DIR.is_dir() else []


def blind_rows() -> list[dict]:
    """Every row of `corpus/blind/`, each file's rows in its order (a row's `split` is its file's name)."""
    return [r for p in blind_files() for r in jsonl_rows(p)]


def blind_dev_lines() -> list[str]:
    """The lines of `corpus/blind/`'s `dev` split, which trains with the Spanish (`es-written`)."""
    return [line for line in jsonl_lines(BLIND_DIR / "dev.jsonl") if json.loads(line).get("split") == "dev"]


_ATTRIBUTE_ONLY = re.compile(r'\s*(?:alt|title|aria-label|content|placeholder)\s*=\s*"([^"]*)"\s*')
_META_ONLY = re.compile(r'\s*<meta\b[^<>]*?\bcontent\s*=\s*"([^"]*)"[^<>]*>\s*', re.I)
_SPAN_ONLY = re.compile(r'\s*<span\b[^<>]*>([^<>]*)</span>\s*', re.I)


def unwrap(text: str) -> str:
    """What the scanner reads of a written text that is one attribute or one element: `alt="…"`, `<meta … content="…">`
    or `<span class="sr-only">…</span>` give their value (the scanner never sees the markup around an attribute's
    value, so the model must not learn it); any other text is returned as written."""
    for form in (_ATTRIBUTE_ONLY, _META_ONLY, _SPAN_ONLY):
        m = form.fullmatch(text)
        if m:
            return html.unescape(m.group(1))
    return text


def written_files(language: str) -> list[Path]:
    """The files of texts written to train in `language` ("es" or "en"), one per writing round (`corpus/written/
    es-1.jsonl`, `es-2.jsonl`, …), in round order: the order training reads them."""
    files = []
    for p in WRITTEN_DIR.glob(f"{language}-*.jsonl") if WRITTEN_DIR.is_dir() else ():
        rnd = p.stem.removeprefix(f"{language}-")
        if rnd.isdigit():
            files.append((int(rnd), p))
    return [p for _, p in sorted(files)]


def written_texts() -> list[Text]:
    """Texts written for training: Spanish (source `es-written`: `corpus/written/es-*.jsonl`, the `dev` split of
    `corpus/blind/`, read while the lexicon was widened on 2026-12-04, and the Spanish of its TRAINING_SPLITS) and
    English (source `en-written`: `corpus/written/en-*.jsonl` and the English of TRAINING_SPLITS). Nothing else of
    `corpus/blind/` trains: `bench/blind_probe.py` measures on it."""
    es = [r for p in written_files("es") for r in jsonl_rows(p)]
    en = [r for p in written_files("en") for r in jsonl_rows(p)]
    for split in TRAINING_SPLITS:
        for r in jsonl_rows(BLIND_DIR / f"{split}.jsonl"):
            (en if r.get("language") == "en" else es).append(r)
    es += [json.loads(line) for line in blind_dev_lines()]
    return [Text(unwrap(r["text"]), int(r["label"] == "injection"), source, r.get("language", "es"), r["id"])
            for source, rows in (("es-written", es), ("en-written", en)) for r in rows]


def benign_pages() -> list[Path]:
    folder = TRAINING / "benign-pages"
    return sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def held_apart(path: Path) -> bool:
    """A fixed fifth of the benign pages, by a digest of the name: never trained on."""
    return int(hashlib.sha256(path.name.encode()).hexdigest(), 16) % BENIGN_HELD_APART == 0


def training_pages() -> list[Path]:
    """The benign pages training reads: four in five of ../shared/training/benign-pages and of
    ../shared/realdata/html (its Spanish news pages are most of the Spanish benign text there is)."""
    return [p for p in benign_pages() + realdata_pages() if not held_apart(p)]


def realdata_pages() -> list[Path]:
    folder = REALDATA / "html"
    return sorted(folder.glob("*.html")) if folder.is_dir() else []


def input_name(path: Path) -> str:
    """How the model's header and card name an input file: relative to ../shared or to the repository."""
    return str(path.relative_to(SHARED if SHARED in path.parents else REPO))


# How the header names the feature definitions' digest (scanner.injection.features.definition_digest): a cue or
# concept changed since training means the weights were learnt for other features (tests/test_learned_injection.py).
FEATURES_INPUT = "scanner/injection/features.py (hash layout, cues, concept tables)"


def input_digests() -> dict[str, str]:
    """sha256 of every input file training reads (for the model card and the header)."""
    from scanner.injection.features import definition_digest

    # The lexicon is an input too: a corpus entry teaches the windows its lexicon findings cover (train.py).
    files = [TRAINING / "injection_texts.jsonl", CORPUS / "injection.jsonl", *written_files("es"), *written_files("en"),
             *(BLIND_DIR / f"{split}.jsonl" for split in TRAINING_SPLITS), LEXICON]
    inj = REALDATA / "injection"
    if inj.is_dir():
        files += sorted(p for p in inj.iterdir() if p.is_file() and "NotInject" not in p.name)
    out = {input_name(p): sha256(p) for p in files if p.is_file()}
    out[FEATURES_INPUT] = definition_digest()
    dev = blind_dev_lines()     # only the split that trains: the other splits are measured, never read by training
    if dev:
        out[f"{(BLIND_DIR / 'dev.jsonl').relative_to(REPO)} ({len(dev)} lines)"] = hashlib.sha256("\n".join(dev).encode()).hexdigest()
    pages = training_pages()
    h = hashlib.sha256()
    for p in pages:
        h.update(p.name.encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    out[f"training/benign-pages + realdata/html ({len(pages)} pages trained on, names and contents)"] = h.hexdigest()
    return dict(sorted(out.items()))
