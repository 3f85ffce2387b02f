#!/usr/bin/env bash
# `bench serve` and `bench prefix` against a real server with a tiny workload: the JSON reports
# are complete and consistent (every request completes, token counts add up, every metric is
# there). Never asserts speed.
source "$(dirname "$0")/lib/server.bash" "$@"

start_server bench --max-num-seqs 8

# A sweep of two levels, random lengths, plot drawn by gnuplot.
if "$BIN" bench serve --url "$URL" --num-prompts 6 --input-len 16 --output-len 8 \
  --range-ratio 0.5 --concurrency 1,4 --json "$WORK/serve.json" --plot "$WORK/serve.png" \
  --no-progress >"$WORK/serve.out" 2>&1; then
  pass "bench serve exits 0"
else
  fail "bench serve exits 0: $(tail -n 20 "$WORK/serve.out")"
fi
if python3 - "$WORK/serve.json" <<'PY'; then pass "bench serve JSON complete and consistent"; else fail "bench serve JSON"; fi
import json, sys
r = json.load(open(sys.argv[1]))
assert [l["concurrency"] for l in r["levels"]] == [1, 4], r["levels"]
for l in r["levels"]:
    n = r["requests"]
    assert l["requests_completed"] == n and l["requests_failed"] == 0, l
    assert l["requests_not_sent"] == 0 and l["length_mismatches"] == 0, l
    assert l["output_tokens"] == l["expected_output_tokens"] == r["expected_output_tokens"], l
    assert l["prompt_tokens"] == r["prompt_tokens"], l
    for k in ["request_throughput", "output_token_throughput", "total_token_throughput",
              "duration_s"]:
        assert l[k] > 0, k
    for m in ["ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"]:
        for s in ["count", "mean", "p50", "p90", "p99", "max"]:
            assert s in l[m], (m, s)
        assert l[m]["p50"] <= l[m]["p99"] <= l[m]["max"], (m, l[m])
    assert l["ttft_ms"]["count"] == n and l["e2e_ms"]["count"] == n, l
    # At most one inter-token gap per token after the first (text held back merges chunks).
    assert 0 < l["itl_ms"]["count"] <= l["output_tokens"] - n, l
    assert l["ttft_ms"]["max"] <= l["e2e_ms"]["max"], l
PY
check "bench serve --plot wrote a PNG" -s "$WORK/serve.png"
check "bench serve prints a row per level" "$(grep -c '^ *[14] ' "$WORK/serve.out")" = 2

# Poisson arrivals with a concurrency cap.
if "$BIN" bench serve --url "$URL" --num-prompts 4 --input-len 8 --output-len 4 \
  --request-rate 50 --max-concurrency 2 --json "$WORK/poisson.json" --no-progress \
  >"$WORK/poisson.out" 2>&1 &&
  python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["levels"][0]; assert l["requests_completed"]==4 and l["requests_failed"]==0, l' "$WORK/poisson.json"; then
  pass "bench serve poisson arrivals"
else
  fail "bench serve poisson arrivals: $(tail -n 20 "$WORK/poisson.out")"
fi

# The prefix scenario: warm requests hit the cache, cold ones do not.
prefix_check() {  # prefix_check JSON EXPECT_HITS(yes|no)
  python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for phase in ["cold", "warm"]:
    l = r[phase]
    assert l["requests_completed"] == 3 and l["requests_failed"] == 0, l
    assert l["output_tokens"] == 3 * 4, l
assert r["cold"]["cached_prompt_tokens"] == 0, r["cold"]
assert r["metrics_found"], r
if sys.argv[2] == "yes":
    # 64 shared tokens = 4 full blocks of 16 per warm request, all found.
    assert r["warm"]["cached_prompt_tokens"] >= 3 * 64, r["warm"]
    assert r["warm_prefix_cache_hits"] >= 3 * 64 and r["warm_prefix_cache_hit_rate"] > 0.5, r
else:
    assert r["warm"]["cached_prompt_tokens"] == 0 and r["warm_prefix_cache_hits"] == 0, r
PY
}
prefix_flags=(--num-prompts 3 --prefix-len 64 --suffix-len 8 --output-len 4 --no-progress)
if "$BIN" bench prefix --url "$URL" "${prefix_flags[@]}" --json "$WORK/prefix.json" \
  >"$WORK/prefix.out" 2>&1 && prefix_check "$WORK/prefix.json" yes; then
  pass "bench prefix: warm requests hit the prefix cache"
else
  fail "bench prefix: $(tail -n 20 "$WORK/prefix.out")"
fi
stop_server "$SERVER_PID" TERM 30

start_server noprefix --max-num-seqs 8 --no-prefix-caching
if "$BIN" bench prefix --url "$URL" "${prefix_flags[@]}" --json "$WORK/noprefix.json" \
  >"$WORK/noprefix.out" 2>&1 && prefix_check "$WORK/noprefix.json" no; then
  pass "bench prefix against --no-prefix-caching: no hits"
else
  fail "bench prefix --no-prefix-caching: $(tail -n 20 "$WORK/noprefix.out")"
fi
stop_server "$SERVER_PID" TERM 30

# bench/http_vs_offline.sh (the HTTP-overhead figure of the README) on a small workload: it
# runs end to end and prints a ratio from complete runs (not its value: never a speed).
out=$(PAGEDSERVE="$BIN" BENCH_PROMPTS=8 BENCH_OUTPUT_LEN=8 bash "$ROOT/bench/http_vs_offline.sh" \
  "$MODEL" 2>&1) || true
if grep -qE '^round 1: .* 0 failed: serve / offline = [0-9.]+$' <<<"$out"; then
  pass "http_vs_offline.sh reports a ratio with no failed requests"
else
  fail "http_vs_offline.sh: $(tail -n 20 <<<"$out")"
fi

# Errors name what to fix.
out=$("$BIN" bench serve --url "$URL" --num-prompts 1 --request-timeout 2 --no-progress 2>&1) &&
  fail "bench serve against a stopped server exits non-zero" ||
  check "bench serve against a stopped server names the URL" -n "$(grep -F "$URL" <<<"$out")"
out=$("$BIN" bench serve --url http://example.com:8000 2>&1) &&
  fail "bench serve refuses a remote URL" ||
  check "bench serve refuses a remote URL without --allow-remote" -n "$(grep -F -- --allow-remote <<<"$out")"
finish
