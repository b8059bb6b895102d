"""A provider's API on loopback for `centinela record`'s tests: it answers as the example tree recorded the
provider (matched as `serve` matches), and leaks what a live API and its client put on the wire — a fresh
set of values per instance: cookies (`Set-Cookie`), an account id header, the client's own credential echoed
back in a header and in the body, personal emails and phones in every JSON answer and page. `secrets` lists
every such value (and the client's credentials, once `remember` is told them), so a test can look for each
one in every file afterwards.

Scenarios, by request header `x-fake-scenario`: `429`, `502`, `503-empty` (the recorded error fixtures) and
`timeout` (no answer for `stall` seconds)."""

from __future__ import annotations

import json
import random
import string
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIRST = ["maria", "jose", "guadalupe", "juan", "ana", "luis", "rosa", "miguel", "sofia", "diego"]
LAST = ["lopez", "hernandez", "garcia", "martinez", "ramirez", "flores", "gomez", "diaz", "torres"]
FREEMAIL = ["gmail.com", "hotmail.com", "yahoo.com.mx", "outlook.com"]


class FakeUpstream:
    def __init__(self, tree: Path, provider: str, seed: int, stall: float = 3.0):
        from scanner.serve import load_catalog

        self.catalog = load_catalog(tree, provider)
        self.provider, self.stall = provider, stall
        rng = random.Random(seed)

        def token(n: int, alphabet=string.ascii_letters + string.digits) -> str:
            return "".join(rng.choice(alphabet) for _ in range(n))

        def email() -> str:
            return f"{rng.choice(FIRST)}.{rng.choice(LAST)}{rng.randint(10, 99)}@{rng.choice(FREEMAIL)}"

        self.cookie = f"__cf_bm={token(40)}"
        self.session = f"sid={token(32, string.hexdigits.lower()[:16])}"
        self.account = f"acct_{token(16, '0123456789abcdef')}"
        self.email_body, self.email_page = email(), email()
        self.phone_body = f"+52 33 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"
        self.phone_page = f"+52 55 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"
        self.secrets = [self.cookie, self.cookie.split("=", 1)[1], self.session.split("=", 1)[1], self.account,
                        self.email_body, self.email_page, self.phone_body, self.phone_page]
        self.requests: list[dict] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def remember(self, *values: str) -> None:
        """The client's own credentials: they must not reach any file either."""
        self.secrets.extend(values)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "FakeUpstream":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- answers ----------------------------------------------------------------------------------------

    def _leaky_json(self, body: bytes, credential: str | None) -> bytes:
        value = json.loads(body)
        if isinstance(value, dict):
            for item in value.get("results") or []:
                if isinstance(item, dict):
                    key = "content" if isinstance(item.get("content"), str) else "text"
                    item[key] = (item.get(key) or "") + (f" Responsable del trámite: {self.email_body}, "
                                                         f"celular {self.phone_body}.")
            if credential:
                value["debug"] = {"api_key": credential.removeprefix("Bearer ").strip()}
        return json.dumps(value, ensure_ascii=False).encode("utf-8")

    def _leaky_page(self, body: bytes) -> bytes:
        text = body.decode("utf-8")
        extra = (f"<p>Atención a clientes: la licenciada Rosa Hernández Díaz, {self.email_page}, "
                 f"celular {self.phone_page}.</p>")
        return (text.replace("</body>", extra + "</body>", 1) if "</body>" in text else text + extra).encode("utf-8")

    def answer(self, method: str, target: str, headers: dict, body: bytes):
        from scanner.serve.matching import request_key

        path, _, query = target.partition("?")
        scenario = headers.get("x-fake-scenario")
        credential = headers.get("authorization") or headers.get("x-api-key")
        if scenario == "timeout":
            time.sleep(self.stall)
            return None
        if scenario:
            fixture = self.catalog.scenarios[scenario]
        else:
            candidates = self.catalog.answers.get(request_key(self.provider, method, path, query, body))
            if not candidates:
                return 404, [("content-type", "application/json")], b'{"detail": "not found"}'
            fixture = candidates[0]
        out = fixture.body
        ctype = dict((k.lower(), v) for k, v in fixture.headers).get("content-type", "")
        if "json" in ctype and out and fixture.status == 200:
            out = self._leaky_json(out, credential)
        elif "html" in ctype and fixture.status == 200:
            out = self._leaky_page(out)
        sent = [(k, v) for k, v in fixture.headers if k.lower() != "x-centinela-fixture"]
        sent += [("set-cookie", f"{self.cookie}; path=/; HttpOnly; Secure"), ("set-cookie", f"{self.session}; Path=/"),
                 ("x-account-id", self.account)]
        if credential:
            sent.append(("x-echo-authorization", credential))
        return fixture.status, sent, out

    def _handler(self):
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):        # quiet: the test reads what it needs from `requests`
                pass

            def _any(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                upstream.requests.append({"method": self.command, "target": self.path, "headers": headers, "body": body})
                got = upstream.answer(self.command, self.path, headers, body)
                if got is None:
                    self.close_connection = True
                    return
                status, sent, out = got
                try:
                    self.send_response_only(status)          # no Date of its own: the recorded one is sent
                    for k, v in sent:
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(out)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(out)
                except OSError:
                    pass

            do_GET = do_POST = do_HEAD = do_PUT = _any

        return Handler
