#!/usr/bin/env bash
# deploy/k8s: the manifests parse, and hold what the README promises: a Deployment whose pods
# are ready only on /health, with resource requests, the model read from a read-only volume,
# a grace period longer than the drain; a Service that selects those pods; and a serve command
# line the real binary accepts (started here with the manifest's flags, probed like the kubelet).
source "$(dirname "$0")/lib/server.bash" "$@"
if ! python3 -c 'import yaml' 2>/dev/null; then
  fail "python3 yaml is missing: apt-get install python3-yaml (scripts/setup.sh installs it)"
  finish
fi

if python3 - "$ROOT/deploy/k8s" >"$WORK/k8s.out" 2>&1 <<'PY'; then pass "deploy/k8s manifests hold the promised fields"; else fail "deploy/k8s: $(cat "$WORK/k8s.out")"; fi
import glob, json, os, sys, yaml
docs = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.yaml"))):
    for d in yaml.safe_load_all(open(f)):
        if d:
            docs[d["kind"]] = d
assert set(docs) == {"Deployment", "Service", "PersistentVolumeClaim"}, sorted(docs)
dep, svc, pvc = docs["Deployment"], docs["Service"], docs["PersistentVolumeClaim"]
assert dep["apiVersion"] == "apps/v1" and svc["apiVersion"] == "v1", (dep["apiVersion"], svc["apiVersion"])
spec = dep["spec"]
labels = spec["template"]["metadata"]["labels"]
assert spec["replicas"] >= 2, spec["replicas"]
assert spec["selector"]["matchLabels"].items() <= labels.items(), "selector must match pod labels"
assert svc["spec"]["selector"].items() <= labels.items(), "Service must select the pods"
pod = spec["template"]["spec"]
(c,) = pod["containers"]
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
args = c["args"]
assert args[0] == "serve", args
flag = lambda name: args[args.index(name) + 1]
assert int(flag("--port")) == ports["http"], (flag("--port"), ports)
assert flag("--host") == "0.0.0.0", "a pod must listen beyond loopback"
rp = c["readinessProbe"]["httpGet"]
assert rp["path"] == "/health" and ports.get(rp["port"], rp["port"]) == ports["http"], rp
assert c["startupProbe"]["httpGet"]["path"] == "/health", c["startupProbe"]
assert "tcpSocket" in c["livenessProbe"], "liveness must not use /health (503 while draining)"
req = c["resources"]["requests"]
assert "cpu" in req and "memory" in req, req
# The model comes from a read-only PVC volume mounted above --model.
mounts = {m["name"]: m for m in c["volumeMounts"]}
vols = {v["name"]: v for v in pod["volumes"]}
model = flag("--model")
(mount,) = [m for m in mounts.values() if model.startswith(m["mountPath"].rstrip("/") + "/")]
assert mount.get("readOnly") is True, mount
claim = vols[mount["name"]]["persistentVolumeClaim"]
assert claim["claimName"] == pvc["metadata"]["name"], (claim, pvc["metadata"])
# SIGKILL only after preStop + the drain.
pre = c["lifecycle"]["preStop"]["exec"]["command"]
pre_s = int(pre[1]) if pre[0] == "sleep" else 0
assert pod["terminationGracePeriodSeconds"] > pre_s + int(flag("--shutdown-timeout")), pod
(sp,) = svc["spec"]["ports"]
assert sp["targetPort"] in ports or sp["targetPort"] in ports.values(), sp
ann = spec["template"]["metadata"]["annotations"]
assert ann["prometheus.io/path"] == "/metrics" and int(ann["prometheus.io/port"]) == ports["http"], ann
PY

# The manifest's serve flags, with the tiny model and a loopback port, start a real server that
# the readiness probe would find ready.
python3 - "$ROOT/deploy/k8s/deployment.yaml" "$MODEL" >"$WORK/args.txt" <<'PY'
import sys, yaml
dep = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "Deployment"][0]
args = dep["spec"]["template"]["spec"]["containers"][0]["args"][1:]
swap = {"--model": sys.argv[2], "--host": "127.0.0.1", "--port": "0"}
out = []
it = iter(args)
for a in it:
    if a in swap:
        next(it)
        out += [a, swap[a]]
    else:
        out.append(a)
print("\n".join(out))
PY
mapfile -t args <"$WORK/args.txt"
log="$WORK/server-k8s.log"
: >"$log"  # exists before the first read: the child opens it only once forked
"$BIN" serve "${args[@]}" >"$log" 2>&1 &
SERVER_PID=$!
SERVER_PIDS+=("$SERVER_PID")
URL=""
for _ in $(seq 1 600); do
  URL=$(sed -n 's/^listening on \(http:\/\/127\.0\.0\.1:[0-9]*\)$/\1/p' "$log" | head -n 1)
  [[ -n "$URL" ]] && grep -q '^ready:' "$log" && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
check "the manifest's serve flags start a server (${args[*]})" -n "$URL"
check "... that the readiness probe finds ready" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" = 200
check "... with the router metrics the annotations point at" "$(curl -s "$URL/metrics" | grep -c '^vllm:num_requests_waiting{')" = 1
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0
finish
