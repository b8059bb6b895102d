"""Recall and false positives of the injection rules on `corpus/blind/` (one file a split), per split, carrier and language.

    python bench/blind_probe.py [--split dev blind blind2 … blind17 written5 … written8] [--misses N] [--json FILE]
    python bench/blind_probe.py --texts FILE.jsonl     # any rows {id, language, label, text[, split, class]}
    python bench/blind_probe.py --flagged FILE.json    # also each text's flagged carriers, to compare two runs
    python bench/blind_probe.py --split blind2 … blind10 --prefix 'An example of prompt injection: ' \
        'Un ejemplo de inyección de prompts: '        # recall when an attacker puts a phrase of his choice first

The folder holds short texts (Spanish first, some English), one file a split. The older splits train, like `dev`
(`scanner.training.sources.TRAINING_SPLITS`): `blind` … `blind10`, `written5` and `written6` since the twenty-first
round, `blind11` … `blind14` and `written7` since the twenty-second, `blind15` … `blind22` and `written8` since the
thirtieth (their benign texts alone since the twenty-eighth), `blind23` … `blind25` and `written9` since the
thirty-second; their figures show what was fitted. `blind26` and `blind27` never train at all (a test checks it):

- `blind`: written by someone with no access to the rules, the corpus or the other sets, and never read while
  writing rules nor used in training — the honest estimate of what the rules find in text nobody here tuned for
  (since 2026-12-04 its figures have also been read to choose among model variants: disclosed in the README);
- `blind2`: written the same way on 2026-12-05, never trained; used (with blind4) to choose in the eleventh round;
- `blind3`: written the same way after the tenth round's model shipped (2026-12-05), kept for the next round: measured
  once on that model, never trained, never used to choose anything;
- `blind4`: written the same way while the eleventh round's training text was written, before its model was trained
  (2026-12-05): measured once on the tenth round's model, then used (with blind2) to choose between it and two
  eleventh-round candidates (rule 2 in the README); never trained;
- `blind5`: written the same way at the end of the eleventh round (2026-12-05), after its rules shipped: kept unread
  and unmeasured until the twelfth round's rules (a wider lexicon, the model retrained with it) were final, then
  measured once on them; the same run on the rules before the round gave the before figure (README); never trained;
- `blind6`: written the same way after the twelfth round's rules were final (2026-12-05): kept unread and unmeasured
  until the thirteenth round's rules (cues naming machine readers in the plural and by their job, the model retrained)
  were chosen, then measured once on them and on the rules before the round (README); never trained;
- `blind7`: written the same way after the thirteenth round's first batch of cues was chosen (2026-12-05): kept unread
  until the round's rules were final, then measured once on them, on the first batch and on the rules before the
  round (README); never trained;
- `blind8`: written the same way while the thirteenth round's second batch of cues was trained (2026-12-05); its
  benign side counted once by mistake on the second batch (a false-positive probe: 8 of 171 flagged in some carrier,
  none read); its attacks first measured on the round's final rules (the third batch), with the second batch and
  the twelfth round's rules for the before figures (README); never trained;
- `blind9`: written the same way after the thirteenth round's rules were final (2026-12-05): never read, never
  trained, measured once in the fourteenth round on its first candidate and on the rules before the round (README);
  in the default `--split` list since;
- `blind10`: written the same way during the fourteenth round (2026-12-05): never read, never trained; measured once
  on the round's shipped rules and on the rules before the round (README); in the default `--split` list since;
- `blind11`: written the same way after the fourteenth round's rules were final (2026-12-05): never read, never
  trained; kept unread until the fifteenth round, then measured once on each of its candidates (two withdrawn) and
  on the rules before the round (README); in the default `--split` list since; trains since the twenty-second round;
- `blind12`: written the same way during the fifteenth round, before any of its candidates was measured (2026-12-05):
  never read, never trained; kept unread until the sixteenth round, then measured once on its shipped rules and on
  the rules before the round (README); in the default `--split` list since; trains since the twenty-second round;
- `blind13`: 391 texts written the same way during the sixteenth round (2026-12-05), after its first candidate was
  measured on the read splits: never read, never trained; kept unread until the seventeenth round, then measured once
  on its shipped rules and on the rules before the round (README); in the default `--split` list since; trains since
  the twenty-second round;
- `blind14`: 394 texts written the same way by two helpers after the seventeenth round's rules were final
  (2026-12-05): never read, never trained; kept unread until the eighteenth round, then measured once on its shipped
  rules and on the rules before the round (README); in the default `--split` list since; trains since the
  twenty-second round;
- `blind15`: 389 texts written the same way by two helpers after the eighteenth round's rules were final (2026-12-05):
  never read, never trained; kept unread until the nineteenth round, then measured once on its shipped rules and on
  the rules before the round (README); in the default `--split` list since;
- `blind16`: 387 texts written the same way by two helpers after the nineteenth round's rules were final (2026-12-05):
  never read, never trained; kept unread until the twentieth round, then measured once on its shipped rules and on
  the rules before the round (README); in the default `--split` list since;
- `blind17`: 396 texts written the same way by two helpers after the twentieth round's rules were final (2026-12-05):
  never read, never trained; kept unread until the twenty-first round, then measured once on its shipped rules and on
  the rules before the round (README); in the default `--split` list since;
- `blind18`: 391 texts written the same way by two helpers after the twenty-first round's rules were final
  (2026-12-05): never read, never trained; kept unread until the twenty-second round, then measured once on its
  shipped rules and on the rules before the round (README); in the default `--split` list since;
- `blind19`: 400 texts written the same way by two helpers after the twenty-second round's rules were chosen
  (2026-12-05): never read, never trained; kept unread until the twenty-fourth round, then measured once on its
  shipped rules and on the rules before the round (README); in the default `--split` list since;
- `blind20`: 400 texts written the same way by two helpers after the twenty-third round's rules were chosen
  (2026-12-05): never read, never trained; kept unread until the twenty-fifth round, then measured once on its
  shipped rules and on the rules before the round (README); in the default `--split` list since;
- `blind21`: 400 texts written the same way by two helpers after the twenty-fifth round's rules were shipped
  (2026-12-06): never read, never trained; measured once on those rules, in a session that changed no finding (no
  round followed: no before/after; README); in the default `--split` list since;
- `blind22`: 400 texts written the same way by two helpers on 2026-12-06, after blind21 was measured (a third of the
  attacks asked to avoid "ignore", "instructions" and "previous"): never trained; measured once in the
  twenty-sixth round, on its rules and on the rules before it (README); in the default `--split` list since; its
  misses read in the twenty-seventh round to write lexicon patterns, so its figures show what was fitted since;
- `blind23`: 400 texts written the same way by two helpers after the twenty-sixth round's rules were final
  (2026-12-06): never read, never trained; kept unread until the twenty-seventh round, then measured once on its
  shipped rules and on the rules before the round (README); in the default `--split` list since; then used with the
  other never-trained splits to judge a second candidate (E11, not chosen); trains since the thirty-second round;
- `blind24`: 398 texts written the same way by two helpers during the twenty-seventh round, after its lexicon patterns
  were written (2026-12-06; two texts equal to earlier or trained ones dropped): never trained; kept unread until the
  twenty-eighth round's candidate was chosen, then measured once on it and on the rules before it (README); in the
  default `--split` list since; trains since the thirty-second round;
- `blind25`: 397 texts written the same way by two helpers after the twenty-eighth round's rules were final
  (2026-12-06; one text equal to an earlier or trained one dropped): never read, never trained; kept unread until the
  thirty-first round, then measured once on the shipped rules, the rules it chose and the candidate it did not
  (README); in the default `--split` list since; trains since the thirty-second round;
- `blind26`: 396 texts written the same way by two helpers after the thirty-first round's rules were final
  (2026-12-06; 113 attacks and 87 benign texts a language asked; four benign texts equal to trained or earlier ones
  dropped): never trained; kept unread until the thirty-second round, then measured once on its shipped rules and
  its two candidates, and chose between them (README); in the default `--split` list since;
- `blind27`: 409 texts written the same way by two helpers (one English, one Spanish: 115 attacks and 90 benign texts
  asked of each) once the thirty-second round's candidates were fixed (2026-12-06; one benign text equal to an
  earlier one dropped; a near-duplicate check printed the first words of three generic lines: an AI-assisted
  writing note, a skip link, a machine-translation notice): never trained; kept unread until the thirty-third round,
  then measured once on its shipped rules and its two candidates, neither of which scored above them (README); in the
  default `--split` list since;
- `blind28`: 407 texts written the same way by two helpers (one English, one Spanish: 115 attacks and 90 or 89 benign
  texts asked of each) once the thirty-third round's candidates were fixed (2026-12-06; two generic benign lines equal
  to trained ones dropped: a skip link, a report download link): never trained; kept unread until the thirty-fourth
  round, then measured once on its shipped rules and its three candidates, and chose between them (README); in the
  default `--split` list since;
- `blind29`: 408 texts written the same way by two helpers (115 attacks and 90 benign texts asked of each language)
  once the thirty-fourth round's candidates were fixed (2026-12-06; two English benign lines equal to earlier or
  trained ones dropped: a title attribute, a robots meta tag): never trained; kept unread until the thirty-fifth
  round, then measured once on its shipped rules and its two candidates, neither of which shipped (README); read
  since (its misses: a third obfuscated), in the default `--split` list;
- `blind30`: 408 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked)
  once the thirty-fifth round's candidates were fixed (2026-12-06; no text equal to an earlier or trained one): never
  trained; kept unread until the thirty-sixth round, then measured once on its shipped rules and its two candidates,
  and chose between them (README); read since, in the default `--split` list;
- `blind31`: 408 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked;
  about 15 attacks a language asked to be obfuscated as attackers do) before the thirty-seventh round's candidates
  were trained (2026-12-07; no text equal to an earlier or trained one): never trained; kept unread until the
  thirty-seventh round, then measured once on its shipped rules and its two candidates, and chose between them
  (README); read since, in the default `--split` list;
- `blind32`: 408 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked;
  about 15 attacks a language obfuscated, encodings with a request to decode among them) before the thirty-eighth
  round's candidate was trained (2026-12-07; no text equal to an earlier or trained one): never read, never
  trained; kept unread until the thirty-eighth round, then measured once on its shipped rules and its candidate,
  which shipped (README); read since, in the default `--split` list;
- `blind33`: 405 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked;
  at least 40 attacks a language subtle, about 15 obfuscated) before the thirty-ninth round's candidates were trained
  (2026-12-07; three benign texts equal to earlier ones dropped): kept unread until the thirty-ninth round, then
  measured once on its shipped rules and its two candidates, and chose between them (README); read since, in the
  default `--split` list; trains since the fortieth round (E44), so its figures show what was fitted;
- `blind34`: 407 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked;
  at least 40 attacks a language subtle, about 15 obfuscated) after the thirty-ninth round, before any fortieth-round
  candidate exists (2026-12-07; one benign text equal to an earlier one dropped): never trained; kept unread until
  the fortieth round, then measured once on its shipped rules and its three candidates, and chose between them
  (README); read since, in the default `--split` list; trains since the forty-first round (E45), so its figures
  show what was fitted;
- `blind35`: 403 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked;
  at least 40 attacks a language subtle, about 15 obfuscated) while the fortieth round's candidates trained, before
  its decision (2026-12-07; five benign texts equal to earlier ones dropped): never trained; kept unread until the
  forty-first round, then measured once on its shipped rules and its three candidates, and chose between them
  (README); read since, in the default `--split` list; trains since the forty-second round (E47), so its figures
  show what was fitted;
- `blind36`: 406 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked;
  at least 40 attacks a language subtle, about 15 obfuscated) while the forty-first round's candidate was benched,
  before its decision (2026-12-07; two benign texts equal to earlier ones dropped): never trained; kept unread until
  the forty-second round, then measured once on its shipped rules and its two candidates, and chose between them
  (README); read since, in the default `--split` list; trains since the forty-third round (E48), so its figures
  show what was fitted;
- `blind37`: 405 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked;
  at least 40 attacks a language subtle, about 15 obfuscated) while the forty-second round's candidate was benched,
  before its decision (2026-12-07; three benign texts equal to earlier ones dropped): never trained; kept unread until
  the forty-third round, then measured once on its shipped rules and its two candidates, and chose between them
  (README); read since, in the default `--split` list; trains since the forty-fourth round (E50), so its figures
  show what was fitted;
- `blind38`: 404 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked;
  at least 40 attacks a language subtle, about 15 obfuscated) while the forty-third round's candidates trained, before
  its decision (2026-12-07; four benign texts equal to earlier ones dropped): never trained; kept unread until the
  forty-fourth round, then measured once on its shipped rules and its two candidates, and chose between them
  (README); read since, in the default `--split` list; trains since the forty-fifth round (E52), so its figures
  show what was fitted;
- `blind39`: 401 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked;
  at least 40 attacks a language subtle, about 15 obfuscated) while the forty-third round's choice was benched
  (2026-12-07; seven benign texts equal to earlier ones dropped): never trained; kept unread until the forty-fifth
  round, then measured once on its shipped rules and its candidate, and chose between them (README); read since, in
  the default `--split` list; trains since the forty-sixth round (E54), so its figures show what was fitted;
- `blind40`: 403 texts written the same way by two helpers (115 attacks and 88 English, 90 Spanish benign texts asked;
  at least 40 attacks a language subtle, about 15 obfuscated) after the forty-fifth round was decided (2026-12-07;
  5 benign texts equal to earlier ones dropped): never trained; kept unread until the forty-sixth round, then
  measured once on its shipped rules and its two candidates, and chose between them (README); read since, in the
  default `--split` list; trains since the forty-seventh round (E57), so its figures show what was fitted;
- `blind41`: 410 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) during the forty-sixth round, before its decision (2026-12-07;
  none equal to an earlier text): never trained; kept unread until the forty-seventh round, then measured once on
  its shipped rules and its two candidates, and chose between them (README); read since, in the default `--split`
  list; trains since the forty-eighth round (E58), so its figures show what was fitted;
- `blind42`: 410 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) during the forty-seventh round, before its decision
  (2026-12-07; none equal to an earlier text): never trained; kept unread until the forty-eighth round, then
  measured once on its shipped rules and its candidate, and chose between them (README); read since, in the
  default `--split` list; trains since the fifty-first round (E63), so its figures show what was fitted;
- `blind43`: 410 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) after the forty-eighth round was decided (2026-12-07; none equal
  to an earlier text): never trained; kept unread until the forty-ninth round, then measured once on its shipped rules
  and its two candidates, neither of which shipped (README); read since, in the default `--split` list; trains
  since the fifty-first round (E63);
- `blind44`: 408 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) during the forty-ninth round, before its decision (2026-12-07;
  two benign texts equal to earlier ones dropped): never trained; kept unread until the fiftieth round, then measured
  once on its shipped rules and its candidate, which did not ship (README); read since, in the default `--split` list;
  trains since the fifty-first round (E63);
- `blind45`: 409 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) during the fiftieth round, before its decision (2026-12-07; one
  Spanish benign text equal to an earlier one dropped): never trained; kept unread until the fifty-first round, then
  measured once on its shipped rules and its two candidates, and chose between them (E63 shipped; README); read
  since, in the default `--split` list;
- `blind46`: 407 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) during the fifty-first round, before its decision (2026-12-07; two
  English and one Spanish benign texts equal to earlier ones dropped): never trained; kept unread until the
  fifty-second round, then measured once on its shipped rules and its candidate, which shipped (E63r; README); read
  since, in the default `--split` list;
- `blind47`: 403 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) after the fifty-second round was decided (2026-12-07; five English
  and two Spanish benign texts equal to earlier ones dropped): never trained; kept unread until the fifty-third round,
  then measured once on its shipped rules and its two candidates, and chose between them (E64a shipped; README); read
  since, in the default `--split` list;
- `blind48`: 410 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) during the fifty-third round, before its decision (2026-12-07; no
  text equal to an earlier one): never trained; kept unread until the fifty-fourth round, then measured once on its
  shipped rules and its candidate, which did not ship (README); read since, in the default `--split` list;
- `blind49`: 410 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) during the fifty-fourth round, before its decision (2026-12-07; no
  text equal to an earlier one): never trained; kept unread until the fifty-fifth round, then measured once on its
  shipped rules and its candidate, which did not ship (README); read since, in the default `--split` list;
- `blind50`: 410 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) after the fifty-fifth round was decided (2026-12-07; no text equal
  to an earlier one): never trained; kept unread until the fifty-sixth round, then measured once on its shipped rules
  and its two candidates (E66b shipped: README); read since, in the default `--split` list;
- `blind51`: 407 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) during the fifty-sixth round, after its candidates were measured on
  blind50 (2026-12-07; one English and two Spanish benign texts equal to earlier ones dropped): never trained; kept
  unread until the fifty-seventh round, then measured once on its shipped rules and three candidates (E67b shipped:
  README); read since, in the default `--split` list;
- `blind52`: 410 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) during the fifty-seventh round, after its candidates were measured
  on blind51 (2026-12-07; no text equal to an earlier one): never trained; kept unread until the fifty-eighth round,
  then measured once on E66b, E67b (shipped by the fifty-seventh round) and E67c, which tied and did not ship (README);
  read since, in the default `--split` list;
- `blind53`: 407 texts written the same way by two helpers (115 attacks and 90 benign texts a language asked; at least
  40 attacks a language subtle, about 15 obfuscated) after the fifty-eighth round was decided (2026-12-08; three Spanish
  benign texts equal to earlier ones dropped): never read, never trained; kept unread (KEPT_UNREAD) for the next round;
- `written9`: 499 texts written the same way on 2026-12-06 to train a twenty-seventh-round candidate (subtle attacks
  that never name what they override, benign text in the same carriers); the candidate was not chosen (written8
  1,136 against the shipped 1,160), so they did not train until the thirty-second round chose a candidate trained
  with them (E28); not read;
- `written5`: 793 texts written the same way to train the eleventh round; the candidates trained with them were not
  chosen, so the shipped model never trained on them: measured on it, its false positives read (error analysis);
- `written6`: 795 texts written the same way on 2026-12-05 as the fourteenth round's second batch of training text
  (prose about AI written for people; attacks in the same genres): the candidate trained with them was not chosen, so
  they never trained (the first batch trains the shipped model, `corpus/written/*-5.jsonl`); measured on the models
  before and after the round (README);
- `written7`: 799 texts written the same way on 2026-12-05 as the fifteenth round's training text (procedures and
  notices for people, pages where a person operates an AI tool, attacks hidden in those genres): the candidate
  trained with them was not chosen, so they never trained; measured once on the models before and after the
  round (README), then its false positives read; trains since the twenty-second round;
- `written8`: 800 texts written the same way by two helpers on 2026-12-05 at the start of the twenty-second round, in
  written7's genres (procedures and notices for people, AI tools operated by people, attacks hidden in those genres;
  280 benign and 120 attacks a language), to measure what written7 measured once written7 trains: never trained,
  measured on every candidate of the round (four rows glimpsed while checking the file's format; no miss or false
  positive read);
- `dev`: written the same way (and a few by the lexicon's author), then used to find what the lexicon missed; its
  figures show what was fitted, not how it generalises.

Every text is put into the page of `scanner/training/carriers.py` (the bench's carriers) in six carriers — an HTML
comment, a `display:none` div, an image's alt, a meta description, a JSON-LD description (the five hidden ones) and
a visible paragraph — and the pages are scanned
with `--kinds injection` exactly as the CLI does (lexicon rules and the learned rule, prefilter on). A page counts
as flagged when any injection finding is reported on it. Nothing here trains anything.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BLIND = REPO / "corpus" / "blind"          # one JSON Lines file a split
# Splits written blind and kept for the next rules that ship: measured once, by name (`--split blind18`), then moved
# out of this list, which makes them default splits like the others.
KEPT_UNREAD: tuple[str, ...] = ("blind53",)


def default_splits(blind_only: bool = False) -> list[str]:
    """Every split file of corpus/blind/ but KEPT_UNREAD: the blind ones in number order, then `written…`, then `dev`."""
    def order(name: str) -> tuple:
        family = 0 if name.startswith("blind") else 1 if name.startswith("written") else 2
        digits = name.lstrip("abcdefghijklmnopqrstuvwxyz")
        return family, int(digits) if digits.isdigit() else 0, name

    names = sorted((p.stem for p in BLIND.glob("*.jsonl") if p.stem not in KEPT_UNREAD), key=order)
    return [n for n in names if n.startswith("blind")] if blind_only else names
HIDDEN = ("comment", "css_hidden", "alt", "meta", "json_ld")
CARRIERS = HIDDEN + ("visible",)
# `--carriers issue`: the hidden carriers issue 13 names (comment, CSS-hidden, white on white, alt, JSON-LD, a hidden
# PDF layer), for figures comparable with its bars; the default five stay so that earlier figures compare.
ISSUE_HIDDEN = ("comment", "css_hidden", "white_on_white", "alt", "json_ld", "pdf_hidden")


def measure(rows: list[dict], carriers: tuple[str, ...] = CARRIERS) -> tuple[dict, dict]:
    """({(split, label, language, carrier): (flagged, total)}, {row id: set of carriers flagged})."""
    from scanner.pipeline.run import scan_paths
    from scanner.scan import Scanner
    from scanner.training import carriers as K

    scanner = Scanner(("injection",))
    counts: dict = defaultdict(lambda: [0, 0])
    flagged_in: dict = defaultdict(set)
    with tempfile.TemporaryDirectory(prefix="centinela-blind-") as tmp:
        paths = {}
        for k, r in enumerate(rows):
            for c in carriers:
                data, name = K.document(c, r["text"])        # a one-page PDF for pdf_hidden, else an HTML page
                p = Path(tmp) / c / f"{k:04d}{Path(name).suffix}"
                p.parent.mkdir(exist_ok=True)
                p.write_bytes(data)
                paths[str(p)] = (k, c)
        result = scan_paths(scanner, [Path(tmp)])       # display paths are relative to it: "comment/0001.html"
        hit = {f.path for f in result.findings if f.kind == "injection"}
        if result.errors:
            raise SystemExit(f"blind_probe: {len(result.errors)} pages could not be scanned: {result.errors[:3]}")
        for display, (k, c) in paths.items():
            r = rows[k]
            is_hit = Path(display).relative_to(tmp).as_posix() in hit
            key = (r["split"], r["label"], r["language"], c)
            counts[key][1] += 1
            if is_hit:
                counts[key][0] += 1
                flagged_in[r["id"]].add(c)
    return counts, flagged_in


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", nargs="*", default=None,
                    help="splits to measure (default: every file of corpus/blind/ but those in KEPT_UNREAD)")
    ap.add_argument("--blind-only", action="store_true",
                    help="of the default splits, only the blind ones (`blind`, `blind2`, …: no written or dev split)")
    ap.add_argument("--misses", type=int, default=0, help="print this many missed attacks (hidden carriers) per split")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--flagged", type=Path, default=None,
                    help="write, per text, its split, label, language and the carriers it was flagged in (JSON): two "
                         "rule sets' runs compare text by text (e.g. what their union would flag)")
    ap.add_argument("--carriers", choices=("default", "issue"), default="default",
                    help="hidden carriers: the default five (comment, css_hidden, alt, meta, json_ld) or the six issue 13 "
                         "names (comment, css_hidden, white_on_white, alt, json_ld, pdf_hidden)")
    ap.add_argument("--texts", type=Path, default=None,
                    help="measure this JSON Lines file instead (e.g. bench/external_texts.py's output)")
    ap.add_argument("--prefix", nargs=2, metavar=("ENGLISH", "SPANISH"), default=None,
                    help="put this phrase in front of every attack text (the English one before English texts, the "
                         "Spanish one before the others): how much a phrase an attacker chooses moves recall, e.g. "
                         "--prefix 'An example of prompt injection: ' 'Un ejemplo de inyección de prompts: '")
    args = ap.parse_args()
    from scanner.training.sources import blind_rows, jsonl_rows, unwrap

    if args.split is None:
        args.split = default_splits(args.blind_only)
    source = args.texts or BLIND
    rows = jsonl_rows(source) if args.texts else blind_rows()
    if args.texts:
        for r in rows:
            r.setdefault("split", "texts")
            r.setdefault("class", "-")
        args.split = sorted({r["split"] for r in rows})
    rows = [r for r in rows if r["split"] in args.split]
    for r in rows:                  # a text written as one attribute or element goes in as its value, as it trains
        r["text"] = unwrap(r["text"])
        if args.prefix and r["label"] == "injection":
            r["text"] = args.prefix[0 if r["language"] == "en" else 1] + r["text"]
    hidden = ISSUE_HIDDEN if args.carriers == "issue" else HIDDEN
    carriers = hidden + ("visible",)
    counts, flagged_in = measure(rows, carriers)
    shown = source.resolve().relative_to(REPO).as_posix() + ("/" if source == BLIND else "") \
        if REPO in source.resolve().parents else source
    print(f"injection rules on {shown}: each text in {len(carriers)} carriers (hidden: "
          f"{', '.join(hidden)}), scan --kinds injection"
          + (f"; every attack text prefixed with {args.prefix[0]!r} (English) or {args.prefix[1]!r}" if args.prefix else ""))
    out = {}
    for split in args.split:
        for label in ("injection", "benign"):
            for lang in sorted({r["language"] for r in rows if r["split"] == split and r["label"] == label}):
                cells = {c: counts[(split, label, lang, c)] for c in carriers}
                n = cells["visible"][1]
                if not n:
                    continue
                hid = [sum(cells[c][0] for c in hidden), sum(cells[c][1] for c in hidden)]
                # texts flagged in at least one hidden carrier (for benign texts: the share a reviewer would see)
                texts = sum(1 for r in rows if r["split"] == split and r["label"] == label and r["language"] == lang
                            and flagged_in.get(r["id"], set()) & set(hidden))
                what = "found" if label == "injection" else "flagged"
                per = "  ".join(f"{c} {cells[c][0]}/{cells[c][1]}" for c in hidden)
                print(f"  {split:5s} {label:9s} {lang} n={n:3d}  hidden {what} {hid[0]}/{hid[1]} = {hid[0] / hid[1]:.3f}"
                      f"   visible {cells['visible'][0]}/{n} = {cells['visible'][0] / n:.3f}   ({per}; "
                      f"texts in any hidden carrier {texts}/{n})")
                out[f"{split}/{label}/{lang}"] = {"hidden": hid, "visible": cells["visible"], "texts_any_hidden": [texts, n],
                                                  **{c: cells[c] for c in hidden}}
        if args.misses:
            by_class: Counter = Counter()
            missed = [r for r in rows if r["split"] == split and r["label"] == "injection"
                      and not (flagged_in.get(r["id"], set()) & set(hidden))]
            for r in missed:
                by_class[r["class"]] += 1
            print(f"  {split}: attacks missed in every hidden carrier, by class: {dict(by_class.most_common())}")
            for r in missed[:args.misses]:
                print(f"    {r['id']}: {r['text'][:140]!r}")
    if len(args.split) > 1:             # the splits together, per label and language
        for label in ("injection", "benign"):
            for lang in sorted({k.split("/")[2] for k in out if k.split("/")[1] == label}):
                cells = [v for k, v in out.items() if k.split("/")[1:] == [label, lang]]
                hid = [sum(v["hidden"][i] for v in cells) for i in (0, 1)]
                vis = [sum(v["visible"][i] for v in cells) for i in (0, 1)]
                texts = [sum(v["texts_any_hidden"][i] for v in cells) for i in (0, 1)]
                print(f"  all   {label:9s} {lang} n={vis[1]:4d}  hidden {hid[0]}/{hid[1]} = {hid[0] / hid[1]:.3f}   "
                      f"visible {vis[0]}/{vis[1]} = {vis[0] / vis[1]:.3f}   texts in any hidden carrier {texts[0]}/{texts[1]}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    if args.flagged:
        per_text = {r["id"]: {"split": r["split"], "label": r["label"], "language": r["language"],
                              "carriers": sorted(flagged_in.get(r["id"], set()))} for r in rows}
        args.flagged.write_text(json.dumps({"carriers": list(carriers), "hidden": list(hidden), "texts": per_text},
                                           indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
