#!/usr/bin/env bash
# Session affinity: 16 conversations, each with its own long system prompt, sent with
# X-Session-ID through nginx to two replicas. With the session config (consistent hash of the
# header) every follow-up turn lands where its prefix is cached: the prefix-cache hit rate read
# from the replicas' /metrics is >= 90%. The same workload under least_conn, in the same run,
# gives the figure to compare (printed, and expected lower: turns spread over both replicas).
source "$(dirname "$0")/lib/server.bash" "$@"
source "$(dirname "$0")/lib/cluster.bash"
need_nginx
clients="$ROOT/tests/e2e/lib/http_clients.py"

run_workload() {  # run_workload BALANCE
  start_cluster "$1" 2 "$1" --max-num-seqs 16
  python3 "$clients" affinity "$CLUSTER_URL" 16 6 --prefix-words 200 \
    --replicas "$(IFS=,; echo "${REPLICA_URLS[*]}")" >"$WORK/affinity-$1.json"
  stop_cluster
}
run_workload least_conn
run_workload session

if python3 - "$WORK/affinity-session.json" "$WORK/affinity-least_conn.json" <<'PY'; then pass "affinity: follow-up prefix-cache hit rate >= 90% with X-Session-ID hashing, and above least_conn's"; else fail "affinity"; fi
import json, sys
s = json.load(open(sys.argv[1]))
l = json.load(open(sys.argv[2]))
for name, r in (("session hash", s), ("least_conn", l)):
    print(f"  {name}: follow-up hit rate {r['follow_up_hit_rate']:.3f}, first turns "
          f"{r['first_turn_hit_rate']:.3f}, overall {r['overall_hit_rate']:.3f} "
          f"({r['ok']}/{r['requests']} ok, {r['follow_up_prompt_tokens']:.0f} follow-up prompt tokens)")
    assert r["ok"] == r["requests"] == 16 * 6, r
assert s["follow_up_prompt_tokens"] > 16 * 5 * 200, s  # the prompts really are long
assert s["follow_up_hit_rate"] >= 0.90, s
assert s["follow_up_hit_rate"] > l["follow_up_hit_rate"], (s, l)
PY
finish
