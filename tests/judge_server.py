#!/usr/bin/env python3
"""A judge model for the tests, on loopback: an OpenAI-compatible
chat-completions endpoint that grades like a SimpleQA judge and misbehaves
on request.

usage: judge_server.py PORT_FILE LOG_FILE [KEY]

Listens on 127.0.0.1 (a free port, written to PORT_FILE once listening),
appends one line per request to LOG_FILE: when it arrived (seconds since
the epoch), the SHA-256 of the user message and the answer given (a
status, "drop", "ok", or "gone" when the client left first). With KEY, a
request without "Authorization: Bearer KEY" gets 401.

The grade: CORRECT when the predicted answer (the line "Predicted answer:
X" of the prompt) equals the gold target ("Gold target: Y"), else
INCORRECT, or NOT_ATTEMPTED for "I don't know". A prompt that asks for a
JSON score (tally's default score template) gets {"score": 5} when the
response holds the reference answer, else {"score": 2}. Markers in the predicted answer make it misbehave, on the
first attempts for that prompt:
  [429]       429 with Retry-After: 1, twice
  [500]       500, twice
  [slow]      the reply after 3 s, once (a client timeout below that)
  [drop]      the connection closed without a reply, once
  [malformed] 200 with a body that is not a chat completion, once
  [garbage]   always a reply with no grade in it (unparseable)
  [badutf8]   the grade followed by bytes that are not UTF-8 (raw, in
              the JSON string)
  [always500] always 500
"""
import hashlib
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]
KEY = sys.argv[3] if len(sys.argv) > 3 else None
seen = {}
lock = threading.Lock()


def field(prompt, name):
    for line in prompt.splitlines():
        if line.startswith(name + ":"):
            return line[len(name) + 1:].strip()
    return ""


class Judge(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes

    def log_message(self, *args):
        pass

    def answer(self, status, body, headers=()):
        data = body.encode().replace(b"@@RAW@@", b"\xff\xfe")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        arrived = time.time()
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n))
        user = [m["content"] for m in req["messages"] if m["role"] == "user"][0]
        h = hashlib.sha256(user.encode()).hexdigest()
        with lock:
            k = seen.get(h, 0)
            seen[h] = k + 1
        try:
            said = self.decide(req, user, k)
        except OSError:
            said = "gone"
        with lock, open(LOG_FILE, "a") as f:
            f.write(f"{arrived:.3f} {h} {said}\n")

    def decide(self, req, user, k):
        if KEY is not None and self.headers.get("Authorization") != "Bearer " + KEY:
            self.answer(401, '{"error": "bad key"}')
            return "401"
        if '{"score":' in user and "Response:" in user:
            resp = user.split("Response:\n", 1)[1].split("\n\nReference", 1)[0]
            ref = user.split("Reference answer (may be empty):\n", 1)[1]
            ref = ref.split("\n\n", 1)[0].strip()
            score = 5 if ref and ref.lower() in resp.lower() else 2
            content = json.dumps({"score": score, "reasoning": "stand-in"})
            return self.complete(req, content)
        got = field(user, "Predicted answer")
        gold = field(user, "Gold target")
        if "[429]" in got and k < 2:
            self.answer(429, '{"error": "slow down"}', [("Retry-After", "1")])
            return "429"
        if "[500]" in got and k < 2 or "[always500]" in got:
            self.answer(500, '{"error": "boom"}')
            return "500"
        if "[slow]" in got and k < 1:
            time.sleep(3)
        if "[drop]" in got and k < 1:
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return "drop"
        if "[malformed]" in got and k < 1:
            self.answer(200, '{"choices": []}')
            return "malformed"
        if "[garbage]" in got:
            content = "I would rather not say."
        else:
            plain = got
            for m in ("[429]", "[500]", "[slow]", "[drop]", "[malformed]",
                      "[badutf8]"):
                plain = plain.replace(m, "")
            content = ("CORRECT" if plain.strip() == gold else
                       "NOT_ATTEMPTED" if plain.strip() == "I don't know" else
                       "INCORRECT")
        if "[badutf8]" in got:
            content += " @@RAW@@"
        return self.complete(req, content)

    def complete(self, req, content):
        body = {"id": "x", "object": "chat.completion", "model": req["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant",
                                         "content": content}}]}
        self.answer(200, json.dumps(body))
        return "ok"


class Server(ThreadingHTTPServer):
    request_queue_size = 1024  # listen()'s backlog; 5 by default


server = Server(("127.0.0.1", 0), Judge)
server.daemon_threads = True
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os  # noqa: E402

os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
