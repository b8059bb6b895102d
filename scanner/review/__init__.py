"""The reviewer page: each injection finding shown as a person sees the page next to what a model reads.

`capture.ReviewCapture` runs inside the scan, while a document is loaded, and keeps what the page needs (the
two views, already masked); `render.render_review(result, rules)` turns a `ScanResult` into one
self-contained HTML file without reopening any file.
"""
