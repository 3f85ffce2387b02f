"""A prefix-aware router driven by KV-cache events: a TEST HARNESS for bench/prefix_routing.sh,
not a product feature (issue #39). llm-d's precise prefix-cache scorer and Dynamo's KV router
are the real consumers of these events; neither runs on this machine, so this stands in for
them to show what the events buy.

It subscribes to every replica's events (ZMQ SUB, vLLM's msgpack batches), keeps per replica the
blocks it holds as (parent hash, block tokens) -> hash, and sends each chat request to the
replica holding the longest run of its prompt's leading blocks (ties: fewer requests in flight;
a replica more than --max-skew requests busier than the least busy one is passed over). The
prompt's token ids come from the replica's own POST /tokenize, so the blocks are the server's.

  /usr/bin/python3 kv_event_router.py PORT BLOCK_SIZE URL=EVENTS_ENDPOINT [URL=ENDPOINT ...]
"""
import collections
import http.client
import http.server
import json
import socketserver
import sys
import threading
import urllib.parse

import msgpack
import zmq


class ReplicaIndex:
    def __init__(self, block_size):
        self.block_size = block_size
        self.lock = threading.Lock()
        self.by_key = {}  # (parent, tokens) -> hash
        self.count = collections.Counter()  # hash -> blocks holding it
        self.keys_of = collections.defaultdict(set)  # hash -> (parent, tokens) keys

    def apply(self, batch):
        _, events = batch
        with self.lock:
            for ev in events:
                if ev[0] == "BlockStored":
                    _, hashes, parent, tokens, bs, lora_id, _ = ev
                    # LoRA chains hold another adapter's K/V: counted, never matched here.
                    for i, h in enumerate(hashes):
                        key = (parent, tuple(tokens[i * bs:(i + 1) * bs]))
                        if lora_id is None:
                            self.by_key[key] = h
                            self.keys_of[h].add(key)
                        self.count[h] += 1
                        parent = h
                elif ev[0] == "BlockRemoved":
                    for h in ev[1]:
                        self.count[h] -= 1
                        if self.count[h] <= 0:
                            for key in self.keys_of.pop(h, ()):
                                self.by_key.pop(key, None)
                            del self.count[h]
                else:
                    self.by_key.clear()
                    self.count.clear()
                    self.keys_of.clear()

    def matched_blocks(self, ids):
        bs = self.block_size
        parent = None
        n = 0
        with self.lock:
            for i in range(0, (len(ids) - 1) // bs):
                h = self.by_key.get((parent, tuple(ids[i * bs:(i + 1) * bs])))
                if h is None:
                    break
                parent = h
                n += 1
        return n


def subscribe(endpoint, index):
    sock = zmq.Context.instance().socket(zmq.SUB)
    sock.connect(endpoint)
    sock.setsockopt_string(zmq.SUBSCRIBE, "")
    while True:
        _, _, payload = sock.recv_multipart()
        index.apply(msgpack.unpackb(payload, raw=False, strict_map_key=False))


def main():
    port = int(sys.argv[1])
    block_size = int(sys.argv[2])
    max_skew = 4
    replicas = []
    for arg in sys.argv[3:]:
        url, endpoint = arg.split("=", 1)
        index = ReplicaIndex(block_size)
        threading.Thread(target=subscribe, args=(endpoint, index), daemon=True).start()
        replicas.append({"url": urllib.parse.urlparse(url), "index": index, "inflight": 0})
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            self.forward(replicas[0], b"")

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            target = replicas[0]
            if self.path == "/v1/chat/completions":
                req = json.loads(body)
                ids = self.tokenize(replicas[0], req["messages"])
                with lock:
                    least = min(r["inflight"] for r in replicas)
                    candidates = [r for r in replicas if r["inflight"] <= least + max_skew]
                    target = max(candidates, key=lambda r: (r["index"].matched_blocks(ids),
                                                            -r["inflight"]))
            self.forward(target, body)

        def tokenize(self, replica, messages):
            c = http.client.HTTPConnection(replica["url"].hostname, replica["url"].port, timeout=60)
            c.request("POST", "/tokenize", json.dumps({"messages": messages}),
                      {"Content-Type": "application/json"})
            ids = json.loads(c.getresponse().read())["tokens"]
            c.close()
            return ids

        def forward(self, replica, body):
            with lock:
                replica["inflight"] += 1
            try:
                c = http.client.HTTPConnection(replica["url"].hostname, replica["url"].port,
                                               timeout=600)
                headers = {"Content-Type": "application/json"} if body else {}
                c.request(self.command, self.path, body or None, headers)
                r = c.getresponse()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("X-Upstream", f"{replica['url'].hostname}:{replica['url'].port}")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while True:
                    chunk = r.read1(65536)
                    if not chunk:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                c.close()
            finally:
                with lock:
                    replica["inflight"] -= 1

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    srv = Server(("127.0.0.1", port), Handler)
    print(f"router: http://127.0.0.1:{srv.server_address[1]}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
