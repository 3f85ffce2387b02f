#!/usr/bin/env python3
"""Real HTTP clients for the replica and edge tests (Python stdlib only).

Subcommands print one JSON object on stdout; the calling .sh test checks it.

  stall URL N [--source ADDR] [--probes K]
      Opens N connections that send half a request line and then nothing, and times a normal
      request (and /health) before and while they are open.
  streams URL N [--max-tokens M] [--source-base ADDR]
      N concurrent streaming completions; counts the ones that got a whole stream.
  seeded URL N [--max-tokens M] [--concurrency C]
      N seeded streaming completions; prints their texts (to compare two URLs) and, per
      request, when the first and the last text chunk arrived.
  failover URL N --max-tokens M --signal-pid PID --after-chunks K
      N streams; once K of them have text, sends SIGTERM to PID; classifies how each ended,
      then sends more requests and counts how many succeed.
  affinity URL SESSIONS TURNS --prefix-tokens P --replicas URL,URL
      SESSIONS conversations with their own long system prompt and X-Session-ID, TURNS
      requests each; reads the prefix-cache counters of every replica before and after.
"""
import argparse
import asyncio
import json
import os
import resource
import signal
import socket
import statistics
import sys
import time
import urllib.parse
import urllib.request


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def host_port(url):
    u = urllib.parse.urlparse(url)
    return u.hostname, u.port or 80


# --- one streaming request over a raw asyncio connection -------------------------------------


async def read_head(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return status, headers


async def body_pieces(reader, headers):
    """Yields the body as it arrives (de-chunked)."""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size_line = await reader.readline()
            if not size_line:
                raise ConnectionError("connection closed inside a chunked body")
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                return
            data = await reader.readexactly(size + 2)
            yield data[:-2]
    elif "content-length" in headers:
        yield await reader.readexactly(int(headers["content-length"]))
    else:
        while True:
            data = await reader.read(65536)
            if not data:
                return
            yield data


async def stream_completion(url, body, extra_headers=None, source=None, timeout=120):
    """One streaming POST /v1/completions. Returns a dict: status, text, events, error events,
    done (saw [DONE]), first/last text arrival (seconds since start), and an exception text."""
    host, port = host_port(url)
    out = {"status": 0, "text": "", "done": False, "errors": [], "first_s": None, "last_s": None,
           "exception": None, "chunks": 0}
    t0 = time.monotonic()
    writer = None
    try:
        kw = {"local_addr": (source, 0)} if source else {}
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, **kw), 30)
        payload = json.dumps(body).encode()
        hdrs = {"Host": f"{host}:{port}", "Content-Type": "application/json",
                "Content-Length": str(len(payload)), "Connection": "close"}
        hdrs.update(extra_headers or {})
        req = "POST /v1/completions HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items())
        writer.write(req.encode() + b"\r\n" + payload)
        await writer.drain()

        async def consume():
            status, headers = await read_head(reader)
            out["status"] = status
            buf = b""
            async for piece in body_pieces(reader, headers):
                buf += piece
                while b"\n\n" in buf:
                    event, buf = buf.split(b"\n\n", 1)
                    for line in event.split(b"\n"):
                        if not line.startswith(b"data: "):
                            continue
                        data = line[6:]
                        if data == b"[DONE]":
                            out["done"] = True
                            continue
                        j = json.loads(data)
                        if "error" in j:
                            out["errors"].append(j["error"])
                            continue
                        text = "".join(c.get("text", "") for c in j.get("choices", []))
                        if text:
                            now = time.monotonic() - t0
                            if out["first_s"] is None:
                                out["first_s"] = now
                            out["last_s"] = now
                            out["chunks"] += 1
                            out["text"] += text
            if status != 200:
                try:
                    out["errors"].append(json.loads(buf or b"{}").get("error", {}))
                except ValueError:
                    out["errors"].append({"message": buf[:200].decode("latin-1")})

        await asyncio.wait_for(consume(), timeout)
    except Exception as e:  # classified by the caller: a hang is a timeout, a cut is a reset
        out["exception"] = f"{type(e).__name__}: {e}"
    finally:
        if writer is not None:
            writer.close()
    return out


def ended_cleanly(r):
    """Completed, or ended with an error event then [DONE]: never hung, never cut silently."""
    if r["exception"]:
        return False
    if r["status"] == 200:
        return r["done"]
    return bool(r["errors"])  # a whole error response (503 from a draining replica, say)


# --- subcommands -------------------------------------------------------------------------------


def timed_request(url, path, body=None):
    t0 = time.monotonic()
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()
        status = r.status
    return (time.monotonic() - t0) * 1000, status


def probe(url, k, worst=False):
    """Median latency of K completions and K /health requests; with worst, the slowest (a
    request queued behind stalled connections is the first one, so a median would hide it)."""
    comp, health = [], []
    for _ in range(k):
        ms, st = timed_request(url, "/v1/completions", {"prompt": "hi", "max_tokens": 2})
        assert st == 200, st
        comp.append(ms)
        ms, st = timed_request(url, "/health")
        assert st == 200, st
        health.append(ms)
    pick = max if worst else statistics.median
    return pick(comp), pick(health)


def cmd_stall(a):
    limit = raise_fd_limit()
    host, port = host_port(a.url)
    # Worst against worst: both samples see the same machine noise (2 shared cores in CI); a
    # request queued behind stalled connections is late by seconds, not milliseconds.
    base_c, base_h = probe(a.url, a.probes, worst=True)
    socks = []
    for _ in range(a.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if a.source:
            s.bind((a.source, 0))
        s.connect((host, port))
        s.sendall(b"POST /v1/completions HTT")  # half a request line, then nothing
        socks.append(s)
    time.sleep(a.settle)  # let the server accept them all
    stalled_c, stalled_h = probe(a.url, a.probes, worst=True)
    # How many of the stalled connections the server has closed already (it should keep them
    # until the header deadline, which is longer than this test's probes).
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1, socket.MSG_PEEK) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    if a.hold_for_close:
        # Wait (bounded) for the server's header deadline to close them, with a 408 or not.
        deadline = time.monotonic() + a.hold_for_close
        pending = set(range(len(socks)))
        answers = {}
        while pending and time.monotonic() < deadline:
            for i in list(pending):
                try:
                    d = socks[i].recv(4096)
                    if d == b"" or d:
                        pending.discard(i)
                        answers[i] = d[:12].decode("latin-1")
                except BlockingIOError:
                    pass
                except OSError:
                    pending.discard(i)
                    answers[i] = "reset"
            time.sleep(0.05)
        statuses = {}
        for v in answers.values():
            statuses[v] = statuses.get(v, 0) + 1
        extra = {"still_open_after_deadline": len(pending), "answers": statuses}
    else:
        extra = {}
    for s in socks:
        s.close()
    print(json.dumps({"fd_limit": limit, "stalled": len(socks), "closed_early": closed,
                      "baseline_completion_ms": base_c, "stalled_completion_ms": stalled_c,
                      "baseline_health_ms": base_h, "stalled_health_ms": stalled_h,
                      "delay_ms": max(stalled_c - base_c, stalled_h - base_h), **extra}))


def cmd_streams(a):
    raise_fd_limit()
    body = {"prompt": "Once upon a time", "max_tokens": a.max_tokens, "temperature": 0,
            "ignore_eos": True, "stream": True}

    async def run():
        return await asyncio.gather(*[stream_completion(a.url, body, timeout=a.timeout)
                                      for _ in range(a.count)])

    t0 = time.monotonic()
    results = asyncio.run(run())
    ok = sum(1 for r in results if r["status"] == 200 and r["done"] and not r["errors"]
             and r["chunks"] > 0)
    failures = [r for r in results if not (r["status"] == 200 and r["done"] and not r["errors"])]
    print(json.dumps({"requests": a.count, "completed": ok, "wall_s": time.monotonic() - t0,
                      "failure_samples": failures[:3]}))


def seeded_body(i, max_tokens):
    return {"prompt": f"Story {i}: the", "max_tokens": max_tokens, "temperature": 0.9,
            "seed": 1000 + i, "ignore_eos": True, "stream": True}


def cmd_seeded(a):
    raise_fd_limit()
    sem = asyncio.Semaphore(a.concurrency)

    async def one(i):
        async with sem:
            return await stream_completion(a.url, seeded_body(i, a.max_tokens))

    async def run():
        return await asyncio.gather(*[one(i) for i in range(a.count)])

    results = asyncio.run(run())
    print(json.dumps({"results": [{"text": r["text"], "ok": r["status"] == 200 and r["done"]
                                   and not r["errors"], "first_s": r["first_s"],
                                   "last_s": r["last_s"], "chunks": r["chunks"],
                                   "exception": r["exception"]} for r in results]}))


def cmd_failover(a):
    raise_fd_limit()
    body = {"prompt": "Count:", "max_tokens": a.max_tokens, "temperature": 0,
            "ignore_eos": True, "stream": True}

    async def run():
        tasks = [asyncio.ensure_future(stream_completion(a.url, body, timeout=a.timeout))
                 for _ in range(a.count)]
        # Signal the replica once it is generating for some of the streams.
        t0 = time.monotonic()
        running = 0
        while time.monotonic() - t0 < 60:
            await asyncio.sleep(0.1)
            m = await asyncio.get_running_loop().run_in_executor(None, scrape, a.watch_url)
            running = m.get(f'vllm:num_requests_running{{model_name="{a.model_name}"}}', 0)
            if running >= a.min_running:
                break
        await asyncio.sleep(a.signal_delay)
        os.kill(a.signal_pid, signal.SIGTERM)
        signalled = time.monotonic()
        # Requests sent after the signal (non-streaming and streaming) must all succeed.
        after = []
        for i in range(a.after):
            after.append(await stream_completion(
                a.url, {"prompt": f"after {i}", "max_tokens": 4, "temperature": 0,
                        "stream": True}, timeout=a.timeout))
        results = await asyncio.gather(*tasks)
        return results, after, time.monotonic() - signalled, running

    results, after, waited, running = asyncio.run(run())
    completed = sum(1 for r in results if r["status"] == 200 and r["done"] and not r["errors"])
    error_ended = sum(1 for r in results if ended_cleanly(r) and r["errors"])
    bad = [r for r in results if not ended_cleanly(r)]
    after_ok = sum(1 for r in after if r["status"] == 200 and r["done"] and not r["errors"])
    print(json.dumps({"streams": len(results), "completed": completed,
                      "ended_with_error_event": error_ended, "hung_or_cut": len(bad),
                      "bad_samples": bad[:3], "after": len(after), "after_ok": after_ok,
                      "after_bad_samples": [r for r in after if not (r["status"] == 200
                                                                     and r["done"])][:3],
                      "seconds_after_signal": waited, "running_when_signalled": running}))


def scrape(url):
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    vals = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, value = line.rsplit(" ", 1)
        vals[name] = float(value)
    return vals


def cache_counters(replicas):
    q = h = 0.0
    for u in replicas:
        m = scrape(u)
        q += m["pagedserve_prefix_cache_queries_total"]
        h += m["pagedserve_prefix_cache_hits_total"]
    return q, h


def cmd_affinity(a):
    replicas = a.replicas.split(",")
    words = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
             "november oscar papa quebec romeo sierra tango uniform victor whiskey xray").split()

    def system_prompt(s):
        # Long and different per session: what one conversation keeps re-sending.
        return " ".join(f"{words[(s * 7 + i) % len(words)]}{s}" for i in range(a.prefix_words))

    def body(s, t):
        return {"prompt": f"{system_prompt(s)}\nUser: question {t} of session {s}?\nAssistant:",
                "max_tokens": 2, "temperature": 0, "stream": True}

    async def session(s, turns):
        out = []
        for t in turns:
            out.append(await stream_completion(a.url, body(s, t),
                                               extra_headers={"X-Session-ID": f"session-{s}"}))
        return out

    async def phase(turns):
        return await asyncio.gather(*[session(s, turns) for s in range(a.sessions)])

    q0, h0 = cache_counters(replicas)
    first = asyncio.run(phase([0]))
    q1, h1 = cache_counters(replicas)
    rest = asyncio.run(phase(range(1, a.turns)))
    q2, h2 = cache_counters(replicas)
    results = [r for s in first + rest for r in s]
    ok = sum(1 for r in results if r["status"] == 200 and r["done"] and not r["errors"])
    print(json.dumps({"requests": len(results), "ok": ok,
                      "first_turn_hit_rate": (h1 - h0) / max(1.0, q1 - q0),
                      "follow_up_hit_rate": (h2 - h1) / max(1.0, q2 - q1),
                      "overall_hit_rate": (h2 - h0) / max(1.0, q2 - q0),
                      "follow_up_prompt_tokens": q2 - q1}))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stall")
    s.add_argument("url")
    s.add_argument("count", type=int)
    s.add_argument("--source")
    s.add_argument("--probes", type=int, default=5)
    s.add_argument("--settle", type=float, default=1.0)
    s.add_argument("--hold-for-close", type=float, default=0)
    s.set_defaults(fn=cmd_stall)
    s = sub.add_parser("streams")
    s.add_argument("url")
    s.add_argument("count", type=int)
    s.add_argument("--max-tokens", type=int, default=4)
    s.add_argument("--timeout", type=float, default=300)
    s.set_defaults(fn=cmd_streams)
    s = sub.add_parser("seeded")
    s.add_argument("url")
    s.add_argument("count", type=int)
    s.add_argument("--max-tokens", type=int, default=16)
    s.add_argument("--concurrency", type=int, default=32)
    s.set_defaults(fn=cmd_seeded)
    s = sub.add_parser("failover")
    s.add_argument("url")
    s.add_argument("count", type=int)
    s.add_argument("--max-tokens", type=int, default=200)
    s.add_argument("--signal-pid", type=int, required=True)
    s.add_argument("--signal-delay", type=float, default=0.5)
    s.add_argument("--watch-url", required=True)
    s.add_argument("--model-name", default="e2e-tiny-model")
    s.add_argument("--min-running", type=int, default=8)
    s.add_argument("--after", type=int, default=16)
    s.add_argument("--timeout", type=float, default=120)
    s.set_defaults(fn=cmd_failover)
    s = sub.add_parser("affinity")
    s.add_argument("url")
    s.add_argument("sessions", type=int)
    s.add_argument("turns", type=int)
    s.add_argument("--prefix-words", type=int, default=200)
    s.add_argument("--replicas", required=True)
    s.set_defaults(fn=cmd_affinity)
    a = p.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
