"""A multi-tenant chat workload for bench/prefix_routing.sh: T tenants, each with its own long
system prompt, U users spread over them, R streamed requests from C concurrent clients. Each
request carries X-Session-ID (its user) for nginx's session hashing. Prints one JSON line: the
time to first token's p50 and p99 (client side, seconds) and the status counts.

  python3 tenant_workload.py URL T U R C PROMPT_WORDS
"""
import concurrent.futures
import http.client
import json
import random
import sys
import time
import urllib.parse


def main():
    url = urllib.parse.urlparse(sys.argv[1])
    tenants, users, requests, clients, words = (int(a) for a in sys.argv[2:7])
    rng = random.Random(7)
    vocab = ["policy", "refund", "invoice", "shipping", "account", "support", "warranty",
             "order", "customer", "product", "service", "billing", "return", "delivery"]
    systems = [f"You are the assistant of company {t}. " +
               " ".join(rng.choice(vocab) for _ in range(words)) for t in range(tenants)]
    plan = []
    for i in range(requests):
        user = rng.randrange(users)
        plan.append((user, user % tenants, i))

    def one(job):
        user, tenant, i = job
        body = json.dumps({"messages": [{"role": "system", "content": systems[tenant]},
                                        {"role": "user", "content": f"user {user} question {i}"}],
                           "max_tokens": 8, "temperature": 0, "stream": True,
                           # A chunk per token even where its text is empty (random weights).
                           "logprobs": True})
        t0 = time.monotonic()
        c = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
        c.request("POST", "/v1/chat/completions", body,
                  {"Content-Type": "application/json", "X-Session-ID": f"user-{user}"})
        r = c.getresponse()
        ttft = None
        for line in r:
            # The first chunk carrying a token (a role-only first chunk does not count).
            if ttft is None and line.startswith(b"data: {"):
                choice = json.loads(line[6:])["choices"][0]
                delta = choice.get("delta", {})
                if delta.get("content") or delta.get("reasoning_content") or choice.get("logprobs"):
                    ttft = time.monotonic() - t0
        c.close()
        return r.status, ttft

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(one, plan))
    ttfts = sorted(t for s, t in results if s == 200 and t is not None)
    codes = {}
    for s, _ in results:
        codes[str(s)] = codes.get(str(s), 0) + 1

    def pct(p):
        return round(ttfts[min(len(ttfts) - 1, int(p * len(ttfts)))], 4) if ttfts else None

    print(json.dumps({"n": len(ttfts), "ttft_p50_s": pct(0.5), "ttft_p99_s": pct(0.99),
                      "codes": codes}))


if __name__ == "__main__":
    main()
