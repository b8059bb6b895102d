"""Recordings as VCR.py, Polly.js and nock write them, built here from random data: a Tavily search and extract
with an Authorization header, cookies (request Cookie and response Set-Cookie), a key in a query string and
personal emails in the bodies, stored the ways those tools store them (plain text, gzip inside base64, hex
chunks, flow or block YAML). Each `Secrets` is fresh, so the redactor is tested on files it has not seen."""

from __future__ import annotations

import base64
import gzip
import json
import random
import string
from dataclasses import dataclass

import yaml

FIRST = ["maria", "jose", "guadalupe", "juan", "ana", "luis", "rosa", "miguel", "sofia", "diego", "elena", "raul"]
LAST = ["lopez", "hernandez", "garcia", "martinez", "ramirez", "flores", "gomez", "diaz", "torres", "ruiz"]
FREEMAIL = ["gmail.com", "hotmail.com", "yahoo.com.mx", "outlook.com", "prodigy.net.mx"]


@dataclass
class Secrets:
    api_key: str
    session: str
    cf_cookie: str
    email_search: str
    email_page: str
    query: str
    page_url: str

    def all(self) -> list[str]:
        return [self.api_key, self.session, self.cf_cookie, self.email_search, self.email_page]

    def query_for(self, fmt: str) -> str:
        """Each format records its own case, so the three files can be served from one provider folder."""
        return f"{self.query} ({fmt})"

    def page_for(self, fmt: str) -> str:
        return f"{self.page_url.rsplit('/', 1)[0]}/{fmt}/contacto"


def secrets(seed: int) -> Secrets:
    rng = random.Random(seed)

    def token(n: int) -> str:
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))

    def email() -> str:
        sep = rng.choice([".", "_", ""])
        return f"{rng.choice(FIRST)}{sep}{rng.choice(LAST)}{rng.randint(10, 99)}@{rng.choice(FREEMAIL)}"

    return Secrets(api_key=f"tvly-dev-{token(32)}", session=token(32).lower(), cf_cookie=token(40),
                   email_search=email(), email_page=email(),
                   query=f"registro sanitario COFEPRIS {rng.choice(['Laboratorios', 'Farmacia', 'Distribuidora'])} "
                         f"{rng.choice(['Sierra Madre', 'Peninsular', 'del Bajío', 'Tonalá'])} {rng.randint(1, 999)}",
                   page_url=f"https://www.{rng.choice(['acme', 'aceros', 'farma'])}{rng.randint(1, 99)}.mx/contacto")


def _search_body(s: Secrets, fmt: str) -> bytes:
    return json.dumps({"query": s.query_for(fmt), "results": [
        {"url": "https://www.gob.mx/cofepris/acciones-y-programas", "title": "Registros sanitarios",
         "content": f"Para aclaraciones escriba a {s.email_search} o llame a la oficina.", "score": 0.91}]},
        ensure_ascii=False).encode("utf-8")


def _page(s: Secrets) -> bytes:
    return (f"<!doctype html><html><body><h1>Contacto</h1><p>Responsable: <a href=\"mailto:{s.email_page}\">"
            f"{s.email_page}</a></p><p>Oficina: ventas@acme.mx</p></body></html>").encode("utf-8")


def _extract_body(s: Secrets, fmt: str) -> bytes:
    return json.dumps({"results": [{"url": s.page_for(fmt), "raw_content": _page(s).decode()}], "failed_results": []},
                      ensure_ascii=False).encode("utf-8")


def vcr_cassette(s: Secrets, rng: random.Random) -> str:
    """What VCR.py's serializer writes (yaml.dump of the cassette dict): bodies as text when they are UTF-8,
    `!!binary` otherwise (a gzip body as the wire carried it)."""
    search_req = json.dumps({"query": s.query_for("vcr"), "max_results": 5}, ensure_ascii=False)
    gz = rng.random() < 0.7
    extract = gzip.compress(_extract_body(s, "vcr"), mtime=0) if gz else _extract_body(s, "vcr").decode()
    data = {"interactions": [
        {"request": {"body": search_req, "headers": {
            "Authorization": [f"Bearer {s.api_key}"], "Content-Type": ["application/json"],
            "Cookie": [f"session={s.session}; theme=dark"], "User-Agent": ["tavily-python/0.5.0"]},
            "method": "POST", "uri": "https://api.tavily.com/search"},
         "response": {"body": {"string": _search_body(s, "vcr").decode()}, "headers": {
             "Content-Length": [str(len(_search_body(s, "vcr")))], "Content-Type": ["application/json"],
             "Date": ["Fri, 02 Oct 2026 14:11:09 GMT"],
             "Set-Cookie": [f"__cf_bm={s.cf_cookie}; path=/; expires=Fri, 02-Oct-26 14:41:09 GMT; HttpOnly"]},
             "status": {"code": 200, "message": "OK"}}},
        {"request": {"body": json.dumps({"urls": [s.page_for("vcr")]}), "headers": {
            "Authorization": [f"Bearer {s.api_key}"], "Content-Type": ["application/json"]},
            "method": "POST", "uri": "https://api.tavily.com/extract"},
         "response": {"body": {"string": extract}, "headers": {
             **({"Content-Encoding": ["gzip"]} if gz else {}),
             "Content-Length": [str(len(extract if gz else extract.encode()))],
             "Content-Type": ["application/json"], "Date": ["Fri, 02 Oct 2026 14:11:10 GMT"]},
             "status": {"code": 200, "message": "OK"}}},
    ], "version": 1}
    dumper = getattr(yaml, "CDumper", yaml.Dumper)
    return yaml.dump(data, Dumper=dumper, default_flow_style=rng.choice([False, None]), allow_unicode=rng.random() < 0.5)


def polly_har(s: Secrets, rng: random.Random) -> str:
    """What Polly.js 6 (persister-fs) writes: sorted keys, 2-space indentation, headers split into pairs, the
    page body base64 with `encoding: "base64"`."""
    search = _search_body(s, "har").decode()
    page = _page(s)
    post = json.dumps({"query": s.query_for("har"), "max_results": 5}, ensure_ascii=False)
    entries = [
        {"_id": "41b7d6ef3c8a6e2d0f9b1a7c5e3d2b10", "_order": 0, "cache": {},
         "request": {"bodySize": len(post.encode()), "cookies": [], "headers": [
             {"_fromType": "array", "name": "authorization", "value": f"Bearer {s.api_key}"},
             {"_fromType": "array", "name": "content-type", "value": "application/json"},
             {"_fromType": "array", "name": "cookie", "value": f"session={s.session}"}],
             "headersSize": 228, "httpVersion": "HTTP/1.1", "method": "POST",
             "postData": {"mimeType": "application/json", "params": [],
                          "text": post},
             "queryString": [], "url": "https://api.tavily.com/search"},
         "response": {"bodySize": len(search.encode()), "content": {
             "mimeType": "application/json", "size": len(search.encode()), "text": search},
             "cookies": [{"httpOnly": True, "name": "__cf_bm", "path": "/", "value": s.cf_cookie}],
             "headers": [{"name": "content-type", "value": "application/json"},
                         {"name": "content-length", "value": str(len(search.encode()))},
                         {"name": "date", "value": "Fri, 02 Oct 2026 14:11:09 GMT"},
                         {"name": "set-cookie", "value": f"__cf_bm={s.cf_cookie}; path=/; HttpOnly"}],
             "headersSize": 160, "httpVersion": "HTTP/1.1", "redirectURL": "", "status": 200, "statusText": "OK"},
         "startedDateTime": "2026-10-02T14:11:09.412Z", "time": 231,
         "timings": {"blocked": -1, "connect": -1, "dns": -1, "receive": 0, "send": 0, "ssl": -1, "wait": 231}},
        {"_id": "9c0e5a1b7d3f2e4c6a8b0d1f3e5c7a9b", "_order": 0, "cache": {},
         "request": {"bodySize": 0, "cookies": [], "headers": [{"name": "cookie", "value": f"session={s.session}"}],
                     "headersSize": 120, "httpVersion": "HTTP/1.1", "method": "GET",
                     "queryString": [{"name": "token", "value": s.api_key}],
                     "url": f"{s.page_for('har')}?token={s.api_key}"},
         "response": {"bodySize": len(page), "content": {
             "encoding": "base64", "mimeType": "text/html; charset=utf-8", "size": len(page),
             "text": base64.b64encode(page).decode()},
             "cookies": [], "headers": [{"name": "content-type", "value": "text/html; charset=utf-8"},
                                        {"name": "content-length", "value": str(len(page))},
                                        {"name": "date", "value": "Fri, 02 Oct 2026 14:11:11 GMT"}],
             "headersSize": 110, "httpVersion": "HTTP/1.1", "redirectURL": "", "status": 200, "statusText": "OK"},
         "startedDateTime": "2026-10-02T14:11:11.020Z", "time": 88,
         "timings": {"blocked": -1, "connect": -1, "dns": -1, "receive": 0, "send": 0, "ssl": -1, "wait": 88}},
    ]
    har = {"log": {"_recordingName": "tavily/search and contact page", "creator": {
        "comment": "persister:fs", "name": "Polly.JS", "version": "6.0.6"}, "entries": entries, "pages": [],
        "version": "1.2"}}
    return json.dumps(har, indent=2, sort_keys=True, ensure_ascii=rng.random() < 0.5) + "\n"


def nock_recording(s: Secrets, rng: random.Random) -> str:
    """What `nock.back` writes (`JSON.stringify(outputs, null, 4)` of the recorder's objects): the search answer as
    JSON, the extract answer as hex chunks of its gzip bytes, rawHeaders flat (nock ≤ 13) or an object (14)."""
    gz = gzip.compress(_extract_body(s, "nock"), mtime=0)
    cut = rng.randint(10, len(gz) - 10)
    flat = rng.random() < 0.6

    def raw(pairs):
        return [x for p in pairs for x in p] if flat else {k.lower(): v for k, v in pairs}

    calls = [
        {"scope": "https://api.tavily.com:443", "method": "POST", "path": "/search",
         "body": {"query": s.query_for("nock"), "max_results": 5}, "status": 200,
         "response": json.loads(_search_body(s, "nock")),
         "rawHeaders": raw([("Content-Type", "application/json"), ("Date", "Fri, 02 Oct 2026 14:11:09 GMT"),
                            ("Set-Cookie", f"__cf_bm={s.cf_cookie}; path=/; HttpOnly")]),
         "reqheaders": {"authorization": f"Bearer {s.api_key}", "content-type": "application/json",
                        "cookie": f"session={s.session}"},
         "responseIsBinary": False},
        {"scope": "https://api.tavily.com:443", "method": "POST", "path": "/extract",
         "body": {"urls": [s.page_for("nock")]}, "status": 200, "response": [gz[:cut].hex(), gz[cut:].hex()],
         "rawHeaders": raw([("Content-Type", "application/json"), ("Content-Encoding", "gzip"),
                            ("Content-Length", str(len(gz))), ("Date", "Fri, 02 Oct 2026 14:11:10 GMT")]),
         "responseIsBinary": False},
    ]
    return json.dumps(calls, indent=4, ensure_ascii=False)


def all_three(seed: int) -> tuple[Secrets, dict[str, str]]:
    """(the secrets, {file name: content}) of a cassette, a HAR and a nock recording made from one seed."""
    s = secrets(seed)
    rng = random.Random(seed * 7919 + 1)
    return s, {"cassette.yaml": vcr_cassette(s, rng), "recording.har": polly_har(s, rng),
               "nock.json": nock_recording(s, rng)}
