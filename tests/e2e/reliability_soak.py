#!/usr/bin/env python3
"""Soak and fault test for `pagedserve serve` (python3 stdlib only; loopback).

Each round fires a burst of concurrent requests with mixed lengths and sampling settings:
streams read to the end, whole JSON responses, streams the client drops mid-way, requests
the client abandons at a random moment (even while queued), and more requests than the
queue admits. The server runs with a KV pool small enough to force preemption.

After each round it checks: every request that was sent ended as (a) completed with its full
output, (b) cancelled by its client, or (c) refused with 429 + Retry-After; /metrics shows zero
running and waiting, no KV block still held (active == 0, so every block is free or cached)
and the integrity gauge at 1. Across rounds the server's thread count and RSS must not keep
growing. Prints the figures as one JSON line ("soak: {...}") and exits 1 on any violation.

usage: reliability_soak.py URL PID [--rounds N] [--requests N] [--seed S]
"""
import argparse
import http.client
import json
import os
import random
import socket
import sys
import threading
import time
from urllib.parse import urlparse

FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL - " + msg, flush=True)


def metrics(host, port):
    c = http.client.HTTPConnection(host, port, timeout=10)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.strip()
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0])  # threads, RSS KiB


def make_body(rng, kind):
    """A request body and what a complete answer must show."""
    n = rng.choice([1, 1, 1, 2])
    max_tokens = rng.choice([1, 2, 5, 16, 40, 80, 160])
    body = {
        "prompt": " ".join(rng.choice(["Once", "upon", "a", "time", "你好", "code", "x=1;", "🙂"])
                           for _ in range(rng.randint(1, 60))),
        "max_tokens": max_tokens,
        "n": n,
        "temperature": rng.choice([0, 0.3, 0.8, 1.2, 2.0]),
        "top_p": rng.choice([1.0, 0.9, 0.5]),
        "top_k": rng.choice([0, 1, 20]),
        "min_p": rng.choice([0, 0.05]),
        "presence_penalty": rng.choice([0, 0.5, -0.5]),
        "seed": rng.randint(0, 1 << 30),
    }
    # ignore_eos makes a full answer checkable: exactly max_tokens tokens per choice, unless a
    # stop string ends it (finish_reason "stop") first.
    body["ignore_eos"] = rng.random() < 0.8
    if rng.random() < 0.2:
        body["stop"] = [rng.choice(["the", "\n", "o"])]
    if rng.random() < 0.2:
        body["logprobs"] = rng.choice([0, 2])
    if kind in ("stream", "drop", "cancel_stream"):
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


class Outcome:
    def __init__(self, kind):
        self.kind = kind
        self.status = None  # HTTP status, or "completed" / "cancelled" / "error:..."
        self.result = None


def send(host, port, body, read_timeout):
    s = socket.create_connection((host, port), timeout=read_timeout)
    data = json.dumps(body).encode()
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Connection: close\r\nContent-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data)
    return s


def read_response(s):
    """Reads a whole Connection: close response: (status, headers, body bytes)."""
    f = s.makefile("rb")
    status_line = f.readline().decode()
    status = int(status_line.split()[1])
    headers = {}
    while True:
        line = f.readline().decode()
        if line in ("\r\n", ""):
            break
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    raw = f.read()
    if headers.get("transfer-encoding") == "chunked":
        out, i = b"", 0
        while True:
            j = raw.index(b"\r\n", i)
            size = int(raw[i:j], 16)
            if size == 0:
                break
            out += raw[j + 2:j + 2 + size]
            i = j + 2 + size + 2
        raw = out
    return status, headers, raw


def check_complete(body, status, headers, raw):
    """Returns None if this 200 answer is the request's full output, else what is wrong."""
    n, max_tokens = body["n"], body["max_tokens"]
    if body.get("stream"):
        events = [l[6:] for l in raw.decode().split("\n") if l.startswith("data: ")]
        if not events or events[-1] != "[DONE]":
            return "stream did not end with [DONE]"
        finish, usage = {}, None
        for e in events[:-1]:
            j = json.loads(e)
            if "error" in j:
                return "stream carried an error: " + e[:200]
            for c in j.get("choices", []):
                if c.get("finish_reason"):
                    finish[c["index"]] = c["finish_reason"]
            if j.get("usage"):
                usage = j["usage"]
        if usage is None:
            return "stream without the usage chunk"
    else:
        j = json.loads(raw)
        finish = {c["index"]: c["finish_reason"] for c in j["choices"]}
        usage = j["usage"]
    if sorted(finish) != list(range(n)):
        return f"finish reasons for choices {sorted(finish)}, want {n}"
    reasons = set(finish.values())
    if not reasons <= {"length", "stop"}:
        return f"finish reasons {reasons}"
    if body["ignore_eos"] and reasons == {"length"} and usage["completion_tokens"] != n * max_tokens:
        return f"completion_tokens {usage['completion_tokens']}, want {n * max_tokens}"
    if usage["completion_tokens"] > n * max_tokens:
        return f"completion_tokens {usage['completion_tokens']} over {n} x {max_tokens}"
    return None


def run_one(host, port, rng, kind, out, delay):
    body = make_body(rng, kind)
    out.result = body
    time.sleep(delay)
    try:
        s = send(host, port, body, read_timeout=120)
        try:
            if kind == "drop":
                # Read a little of the stream, then vanish without a goodbye (RST on close).
                s.recv(rng.randint(1, 600))
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                out.status = "cancelled"
                return
            if kind in ("cancel", "cancel_stream"):
                # Abandon at a random moment: maybe still queued, maybe mid-generation.
                time.sleep(rng.random() * 0.5)
                out.status = "cancelled"
                return
            status, headers, raw = read_response(s)
        finally:
            s.close()
    except (OSError, ValueError) as e:
        out.status = f"error:{type(e).__name__}:{e}"
        return
    if status == 200:
        problem = check_complete(body, status, headers, raw)
        out.status = "completed" if problem is None else "error:" + problem
    elif status == 429:
        out.status = 429 if "retry-after" in headers else "error:429 without Retry-After"
    else:
        out.status = f"error:HTTP {status}: {raw[:200]!r}"


def wait_idle(host, port, timeout_s=60):
    deadline = time.time() + timeout_s
    m = {}
    while time.time() < deadline:
        m = metrics(host, port)
        if m.get("pagedserve_num_requests_running") == 0 and m.get("pagedserve_num_requests_waiting") == 0:
            return m
        time.sleep(0.1)
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("pid", type=int)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=150, help="requests per round")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    u = urlparse(a.url)
    host, port = u.hostname, u.port
    rng = random.Random(a.seed)
    kinds = ["stream"] * 4 + ["whole"] * 3 + ["drop"] * 2 + ["cancel"] + ["cancel_stream"]
    totals = {"sent": 0, "completed": 0, "cancelled": 0, "rejected": {}, "errors": 0}
    samples = []
    for rnd in range(a.rounds):
        outcomes = []
        threads = []
        for i in range(a.requests):
            o = Outcome(rng.choice(kinds))
            outcomes.append(o)
            # A third arrive together (the burst past the queue limit), the rest spread over
            # a few seconds so that most are admitted and run into each other in the KV pool.
            delay = 0 if i % 3 == 0 else rng.random() * 4
            t = threading.Thread(target=run_one, daemon=True,
                                 args=(host, port, random.Random(rng.random()), o.kind, o, delay))
            threads.append(t)
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
            if t.is_alive():
                fail(f"round {rnd}: a client thread did not finish in 300 s")
        m = wait_idle(host, port)
        for o in outcomes:
            totals["sent"] += 1
            if o.status == "completed":
                totals["completed"] += 1
            elif o.status == "cancelled":
                totals["cancelled"] += 1
            elif isinstance(o.status, int):
                totals["rejected"][str(o.status)] = totals["rejected"].get(str(o.status), 0) + 1
            else:
                totals["errors"] += 1
                fail(f"round {rnd}: {o.kind} request ended as {o.status}; body {json.dumps(o.result)[:300]}")
        if m.get("pagedserve_num_requests_running") != 0 or m.get("pagedserve_num_requests_waiting") != 0:
            fail(f"round {rnd}: /metrics still shows running={m.get('pagedserve_num_requests_running')} "
                 f"waiting={m.get('pagedserve_num_requests_waiting')} 60 s after the last client")
        active = m.get('pagedserve_kv_cache_blocks{state="active"}')
        if active != 0:
            fail(f"round {rnd}: {active} KV blocks still held with nothing running (leak)")
        if m.get("pagedserve_kv_cache_integrity_ok") != 1:
            fail(f"round {rnd}: kv_cache_integrity_ok is {m.get('pagedserve_kv_cache_integrity_ok')}")
        blocks = {s: m.get(f'pagedserve_kv_cache_blocks{{state="{s}"}}') for s in ("free", "cached", "total")}
        if blocks["free"] is None or blocks["free"] + blocks["cached"] != blocks["total"]:
            fail(f"round {rnd}: free + cached != total: {blocks}")
        thr, rss = proc_status(a.pid)
        samples.append((thr, rss))
        print(f"round {rnd}: {sum(o.status == 'completed' for o in outcomes)} completed, "
              f"{sum(o.status == 'cancelled' for o in outcomes)} cancelled, "
              f"{sum(isinstance(o.status, int) for o in outcomes)} rejected; threads {thr}, RSS {rss // 1024} MiB, "
              f"preemptions so far {int(m.get('pagedserve_num_preemptions_total', -1))}", flush=True)

    # Growth: round 0 warms caches and pools; later rounds must not keep adding threads or
    # memory. Bounds are generous (allocator noise), a leak per request would cross them.
    if len(samples) >= 2:
        base_thr, base_rss = samples[0]
        last_thr, last_rss = samples[-1]
        # The HTTP worker pool starts threads as requests overlap, so how many it reaches depends
        # on the machine's load (a busy CI host overlapped more in round 1: 31, 47, 47). A leak
        # keeps growing; a warming pool stops: the last round is held to the most any earlier
        # round reached, not to round 0.
        most_thr = max(t for t, _ in samples[:-1])
        if last_thr > most_thr + 8:
            fail(f"threads grew from {most_thr} to {last_thr} in the last round "
                 f"(rounds: {[t for t, _ in samples]})")
        # Under AddressSanitizer RSS is not a leak signal: freed memory waits in ASan's
        # quarantine and per-thread caches (it grew ~300 MiB a round there). LeakSanitizer
        # checks the server at exit instead (scripts/sanitize.sh sets PAGEDSERVE_SANITIZER).
        if os.environ.get("PAGEDSERVE_SANITIZER") == "address":
            print(f"RSS growth not checked under ASan ({base_rss // 1024} -> {last_rss // 1024} MiB); "
                  "LeakSanitizer checks the server at exit", flush=True)
        elif last_rss > base_rss * 1.3 + 64 * 1024:
            fail(f"RSS grew from {base_rss // 1024} MiB to {last_rss // 1024} MiB across rounds")
    m = metrics(host, port)
    totals["accepted"] = totals["sent"] - sum(totals["rejected"].values()) - totals["errors"]
    totals["preemptions"] = int(m.get("pagedserve_num_preemptions_total", 0))
    totals["blocks_leaked"] = int(m.get('pagedserve_kv_cache_blocks{state="active"}', -1))
    totals["server_requests_finished"] = int(m.get("pagedserve_requests_finished_total", 0))
    totals["server_requests_aborted"] = int(m.get("pagedserve_requests_aborted_total", 0))
    # 503 is left out: /health answers it while the model loads (the harness polls it then);
    # a 503 to a soak client is already counted as that client's error.
    totals["http_5xx"] = int(sum(v for k, v in m.items()
                                 if k.startswith('pagedserve_http_responses_total{code="5') and '"503"' not in k))
    totals["threads"] = [s[0] for s in samples]
    totals["rss_mib"] = [s[1] // 1024 for s in samples]
    print("soak: " + json.dumps(totals), flush=True)
    if totals["http_5xx"]:
        fail(f"{totals['http_5xx']} responses were 5xx")
    if totals["rejected"].get("429", 0) == 0:
        fail("no request was refused with 429: the burst never passed --max-queued-requests")
    if totals["preemptions"] == 0:
        fail("no preemption happened: the KV pool was not small enough to exercise it")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
