#!/usr/bin/env bash
# Replicas behind nginx (deploy/nginx, scripts/serve-cluster.sh): seeded streams through nginx
# give the same text as sent to one replica directly, chunks arrive as they are generated, the
# scripts refuse bad input, the cluster stops whole on SIGTERM, and `bench serve` through nginx
# vs direct (one replica) reports a throughput ratio (printed, never asserted: not a speed test).
source "$(dirname "$0")/lib/server.bash" "$@"
source "$(dirname "$0")/lib/cluster.bash"
need_nginx
clients="$ROOT/tests/e2e/lib/http_clients.py"

# The scripts refuse what they cannot do, naming the fix.
rc=0
bash "$ROOT/scripts/serve-cluster.sh" 0 >"$WORK/usage.out" 2>&1 || rc=$?
check "serve-cluster.sh 0 exits 2" "$rc" = 2
check "serve-cluster.sh says the usage" "$(grep -c 'usage: scripts/serve-cluster.sh N' "$WORK/usage.out")" = 1
rc=0
bash "$ROOT/scripts/serve-cluster.sh" 2 --port 9000 >"$WORK/port.out" 2>&1 || rc=$?
check "serve-cluster.sh refuses --port (exit 2, names CLUSTER_PORT)" "$rc:$(grep -c CLUSTER_PORT "$WORK/port.out")" = "2:1"
rc=0
bash "$ROOT/deploy/nginx/render.sh" --prefix "$WORK" --listen 127.0.0.1:1 --balance random \
  --upstream 127.0.0.1:2 >"$WORK/render.out" 2>&1 || rc=$?
check "render.sh refuses an unknown --balance" "$rc:$(grep -c 'least_conn or session' "$WORK/render.out")" = "2:1"

# Both rendered variants pass `nginx -t`, and the upstream idle timeout stays below the replicas'.
for balance in least_conn session; do
  bash "$ROOT/deploy/nginx/render.sh" --prefix "$WORK" --listen 127.0.0.1:1 --balance "$balance" \
    --upstream 127.0.0.1:2 --upstream 127.0.0.1:3 >"$WORK/$balance.conf"
  if nginx -t -q -p "$WORK" -c "$WORK/$balance.conf" -e "$WORK/nginx-t.log" 2>"$WORK/nginx-t.err"; then
    pass "nginx -t accepts the $balance config"
  else
    fail "nginx -t on the $balance config: $(cat "$WORK/nginx-t.err")"
  fi
done
check "session config hashes X-Session-ID, request id when absent" \
  "$(grep -c -e 'hash $pagedserve_affinity_key consistent;' -e '""      $request_id;' -e 'default $http_x_session_id;' "$WORK/session.conf")" = 3
check "least_conn config balances by least_conn" "$(grep -c '^ *least_conn;' "$WORK/least_conn.conf")" = 1
for want in 'proxy_buffering off;' 'proxy_http_version 1.1;' 'proxy_set_header Connection "";' \
  'proxy_read_timeout 3600s;' 'proxy_next_upstream error timeout http_502 http_503 non_idempotent;'; do
  check "config has: $want" "$(grep -cF -- "$want" "$WORK/least_conn.conf")" = 1
done
upstream_idle=$(sed -n 's/^ *keepalive_timeout \([0-9]*\)s;/\1/p' "$WORK/least_conn.conf" | sed -n 2p)
replica_idle=$("$BIN" serve --help | sed -n 's/.*--keep-alive-timeout \([0-9]*\).*/\1/p')
check "replica keep-alive ($replica_idle s) outlasts nginx's upstream keepalive_timeout ($upstream_idle s)" \
  "$replica_idle" -gt "$upstream_idle"

# Two replicas. 200 seeded streams through nginx, then the same straight to replica 1.
start_cluster two 2 least_conn --max-num-seqs 32
check "a direct stream says X-Accel-Buffering: no" \
  "$(curl -s -N -D - -o /dev/null -H 'Content-Type: application/json' \
    -d '{"prompt":"hi","max_tokens":2,"stream":true}' "${REPLICA_URLS[0]}/v1/completions" |
    grep -ci '^x-accel-buffering: no')" = 1
python3 "$clients" seeded "$CLUSTER_URL" 200 --max-tokens 16 --concurrency 32 >"$WORK/via-nginx.json"
python3 "$clients" seeded "${REPLICA_URLS[0]}" 200 --max-tokens 16 --concurrency 32 >"$WORK/direct.json"
if python3 - "$WORK/via-nginx.json" "$WORK/direct.json" <<'PY'; then pass "200 streams through nginx: all complete, text identical to direct"; else fail "200 streams through nginx vs direct"; fi
import json, sys
a = json.load(open(sys.argv[1]))["results"]
b = json.load(open(sys.argv[2]))["results"]
assert len(a) == len(b) == 200
bad = [i for i in range(200) if not (a[i]["ok"] and b[i]["ok"])]
assert not bad, ("incomplete", bad[:5], a[bad[0]], b[bad[0]])
diff = [i for i in range(200) if a[i]["text"] != b[i]["text"]]
assert not diff, ("text differs", diff[:5], a[diff[0]]["text"], b[diff[0]]["text"])
assert len({r["text"] for r in a}) > 100, "seeded texts should differ between requests"
PY
# Both replicas took part (least_conn spreads concurrent requests).
served=$(grep -o '"POST /v1/completions[^"]*" 200' "$CLUSTER_DIR/access.log" | wc -l)
check "nginx logged the 200 streams" "$served" -ge 200
for i in 0 1; do
  n=$(curl -s "${REPLICA_URLS[$i]}/metrics" | awk '$1 == "pagedserve_requests_finished_total" { print $2 }')
  check "replica $((i + 1)) served some of them ($n)" "${n%.*}" -gt 0
done

# Chunks come through as generated: alone on the cluster, a long stream's first text arrives
# well before its last (buffered by a proxy, both would arrive together at the end).
python3 "$clients" seeded "$CLUSTER_URL" 2 --max-tokens 200 --concurrency 1 >"$WORK/long.json"
if python3 - "$WORK/long.json" <<'PY'; then pass "through nginx the first chunk arrives long before the last"; else fail "chunk timing through nginx"; fi
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    assert r["ok"] and r["chunks"] >= 30, r
    print(f"  first chunk {r['first_s'] * 1000:.0f} ms, last {r['last_s'] * 1000:.0f} ms, {r['chunks']} chunks")
    assert r["first_s"] < 0.25 * r["last_s"], r
PY

# SIGTERM to serve-cluster.sh stops nginx and every replica.
stop_cluster
check "serve-cluster.sh exits 0 on SIGTERM" "$STOP_RC" = 0
alive=0
for p in "${REPLICA_PIDS[@]}" "$(cat "$CLUSTER_DIR/nginx.pid.child")"; do
  kill -0 "$p" 2>/dev/null && alive=$((alive + 1))
done
check "no replica or nginx left running" "$alive" = 0
check "the replicas stopped cleanly" "$(cat "$CLUSTER_DIR"/replica-*.log | grep -c '^pagedserve: stopped')" = 2

# One replica: bench serve through nginx vs direct, alternating, same workload.
start_cluster one 1 least_conn --max-num-seqs 16
bench() {  # bench URL OUT
  "$BIN" bench serve --url "$1" --num-prompts 48 --input-len 32 --output-len 32 --concurrency 8 \
    --json "$2" --no-progress >"$2.log" 2>&1
}
ok=1
for round in 1 2; do
  bench "${REPLICA_URLS[0]}" "$WORK/direct-$round.json" || ok=0
  bench "$CLUSTER_URL" "$WORK/nginx-$round.json" || ok=0
done
if ((ok)) && python3 - "$WORK" <<'PY'; then pass "bench serve through nginx vs direct: every request completed"; else fail "bench serve through nginx vs direct"; fi
import json, sys
d = sys.argv[1]
thr = {}
for kind in ["direct", "nginx"]:
    vals = []
    for r in (1, 2):
        lvl = json.load(open(f"{d}/{kind}-{r}.json"))["levels"][0]
        assert lvl["requests_completed"] == 48 and lvl["requests_failed"] == 0, lvl
        vals.append(lvl["output_token_throughput"])
    thr[kind] = sum(vals) / len(vals)
print(f"  bench serve, one replica: direct {thr['direct']:.1f} tok/s, through nginx "
      f"{thr['nginx']:.1f} tok/s: nginx / direct = {thr['nginx'] / thr['direct']:.3f} (goal >= 0.95)")
PY
stop_cluster
finish
