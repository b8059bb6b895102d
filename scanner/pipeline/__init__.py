"""One pipeline for every command that reads fixtures (`scan`, `check`, `redact`, the pre-commit hooks).

Data flows one way:

    targets (pipeline.targets)                    the files, and the tree each must stay inside
      → each file read and loaded once (pipeline.files)   its Document, with exact offsets
      → the detectors (scanner.scan.Scanner)      injection, secrets, personal data
      → per-file results (FileScan)               entry, errors, findings, the text the outputs need,
                                                  and, when asked, the file's redaction plan
      → the run's result (pipeline.run → ScanResult)
      → the tree's expectations and the reviewed exceptions (pipeline.policy)
      → outputs: JSON, text (scanner.scan_text), SARIF (scanner.sarif), baselines, review page,
        redaction plan, `check`'s parts (pipeline.check_tree)

No output reads a file again: SARIF positions and line hashes, fingerprints, baselines and inline
directives all come from the texts the run kept (`ScanResult.sources`).
"""
