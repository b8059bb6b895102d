"""Training and measuring the learned injection detector (never imported at scan time).

It lives in the package, not in scripts/, because three callers share it — `make train-injection-model`,
`make bench-injection` and the tests (the reproducibility check and the prefilter's soundness test) — and
because it reads benign pages through the scanner's own loaders, so the channels it trains on are the
channels the scanner sees. scikit-learn is imported only here, and only when training (the `train` extra).
"""
