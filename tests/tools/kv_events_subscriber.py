"""A KV-cache event subscriber written from vLLM's published format (issue #39), with Debian's
python3-zmq and python3-msgpack: it decodes every batch as vllm.distributed.kv_events defines it
(EventBatch [ts, events], tagged array-like events), rebuilds the multiset of cached block hashes
from the events alone, deliberately drops a run of batches and recovers them from the replay
socket, and at the end compares its multiset with the server's GET /debug/kv-cache/blocks.

  /usr/bin/python3 kv_events_subscriber.py ENDPOINT REPLAY TOPIC URL READY_FILE STOP_FILE \
      --drop-from N --drop-count M
Writes READY_FILE once subscribed; after STOP_FILE appears, syncs to the server's last batch
and prints one JSON line of findings; exits 1 on any mismatch or malformed batch.
"""
import argparse
import collections
import json
import os
import sys
import time
import urllib.request

import msgpack
import zmq

END_SEQ = -1


def fail(msg):
    print(json.dumps({"ok": False, "error": msg}))
    sys.exit(1)


def check_event(ev, block_size_seen):
    if not isinstance(ev, list) or not ev or not isinstance(ev[0], str):
        fail(f"event is not a tagged array: {ev!r}")
    tag = ev[0]
    if tag == "BlockStored":
        if len(ev) != 7:
            fail(f"BlockStored has {len(ev)} fields, vLLM's has 7 (tag + 6): {ev!r}")
        _, hashes, parent, tokens, block_size, lora_id, medium = ev
        if not hashes or not all(isinstance(h, int) for h in hashes):
            fail(f"block_hashes: {hashes!r}")
        if parent is not None and not isinstance(parent, int):
            fail(f"parent_block_hash: {parent!r}")
        if not isinstance(block_size, int) or block_size <= 0:
            fail(f"block_size: {block_size!r}")
        if len(tokens) != len(hashes) * block_size or not all(isinstance(t, int) for t in tokens):
            fail(f"{len(tokens)} token ids for {len(hashes)} blocks of {block_size}")
        if lora_id is not None and not isinstance(lora_id, int):
            fail(f"lora_id: {lora_id!r}")
        if medium not in ("CPU", "GPU"):
            fail(f"medium: {medium!r}")
        block_size_seen.add(block_size)
    elif tag == "BlockRemoved":
        if len(ev) != 3:
            fail(f"BlockRemoved has {len(ev)} fields, vLLM's has 3 (tag + 2): {ev!r}")
        if not ev[1] or not all(isinstance(h, int) for h in ev[1]):
            fail(f"block_hashes: {ev[1]!r}")
    elif tag == "AllBlocksCleared":
        if len(ev) != 1:
            fail(f"AllBlocksCleared carries fields: {ev!r}")
    else:
        fail(f"unknown event tag {tag!r}")


class Mirror:
    def __init__(self):
        self.keys = collections.Counter()
        self.applied = -1  # the last batch seq applied, in order
        self.stats = collections.Counter()
        self.block_sizes = set()

    def apply(self, seq, payload):
        if seq != self.applied + 1:
            fail(f"applying batch {seq} after {self.applied}: out of order")
        batch = msgpack.unpackb(payload, raw=False, strict_map_key=False)
        if not isinstance(batch, list) or len(batch) != 2 or not isinstance(batch[0], float):
            fail(f"batch {seq} is not [ts, events]: {batch!r}")
        if abs(batch[0] - time.time()) > 3600:
            fail(f"batch {seq} timestamp {batch[0]} is not now")
        for ev in batch[1]:
            check_event(ev, self.block_sizes)
            tag = ev[0]
            self.stats[tag] += 1
            if tag == "BlockStored":
                if ev[5] is not None:
                    self.stats["lora_stored"] += 1
                if ev[2] is not None:
                    self.stats["with_parent"] += 1
                for h in ev[1]:
                    self.keys[h] += 1
            elif tag == "BlockRemoved":
                for h in ev[1]:
                    if self.keys[h] <= 0:
                        fail(f"batch {seq} removes {h}, which no event stored")
                    self.keys[h] -= 1
            else:
                self.keys.clear()
        self.applied = seq


def replay(sock, start, mirror, until=None):
    """Asks for every kept batch from `start` and applies them in order."""
    sock.send_multipart([b"", start.to_bytes(8, "big", signed=True)])
    got = 0
    while True:
        if not sock.poll(10000):
            fail(f"replay from {start} timed out")
        frames = sock.recv_multipart()
        if len(frames) != 3 or frames[0] != b"":
            fail(f"replay answered {len(frames)} frames")
        seq = int.from_bytes(frames[1], "big", signed=True)
        if seq == END_SEQ:
            if frames[2]:
                fail("end-of-replay marker carries a payload")
            return got
        if seq > mirror.applied and (until is None or seq <= until):
            mirror.apply(seq, frames[2])
            got += 1


def main():
    ap = argparse.ArgumentParser()
    for name in ("endpoint", "replay", "topic", "url", "ready_file", "stop_file"):
        ap.add_argument(name)
    ap.add_argument("--drop-from", type=int, default=-1)
    ap.add_argument("--drop-count", type=int, default=0)
    a = ap.parse_args()

    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.connect(a.endpoint)
    sub.setsockopt_string(zmq.SUBSCRIBE, a.topic)
    rep = ctx.socket(zmq.DEALER)
    rep.connect(a.replay)
    # A subscription takes a moment to reach the publisher (ZMQ's slow joiner); whatever is
    # published before it arrives is recovered by replay, so "ready" only needs the connect.
    time.sleep(0.2)
    open(a.ready_file, "w").close()

    mirror = Mirror()
    dropped = 0
    replayed = 0
    stop_seen = False
    target = None
    while True:
        if not stop_seen and os.path.exists(a.stop_file):
            stop_seen = True
            with urllib.request.urlopen(a.url + "/debug/kv-cache/blocks", timeout=60) as r:
                snapshot = json.load(r)
            target = snapshot["last_event_seq"]
            deadline = time.time() + 60
        if stop_seen and mirror.applied >= target:
            break
        if stop_seen and time.time() > deadline:
            # Nothing more arrives: fetch what is missing from the replay socket.
            replayed += replay(rep, mirror.applied + 1, mirror, until=target)
            if mirror.applied < target:
                fail(f"synced to {mirror.applied}, the server's last batch is {target}")
            break
        if not sub.poll(100):
            if stop_seen and mirror.applied < target:
                replayed += replay(rep, mirror.applied + 1, mirror, until=target)
            continue
        topic, seq_bytes, payload = sub.recv_multipart()
        if topic.decode() != a.topic or len(seq_bytes) != 8:
            fail(f"bad frames: topic {topic!r}, seq {seq_bytes!r}")
        seq = int.from_bytes(seq_bytes, "big")
        if a.drop_from <= seq < a.drop_from + a.drop_count:
            dropped += 1  # as if the network lost it
            continue
        if seq <= mirror.applied:
            continue
        if seq > mirror.applied + 1:
            replayed += replay(rep, mirror.applied + 1, mirror, until=seq - 1)
        if seq == mirror.applied + 1:
            mirror.apply(seq, payload)

    server = collections.Counter(snapshot["block_hashes"])
    mine = +mirror.keys
    result = {
        "ok": mine == server,
        "batches": mirror.applied + 1,
        "dropped": dropped,
        "replayed": replayed,
        "cached_blocks": sum(server.values()),
        "stored_events": mirror.stats["BlockStored"],
        "removed_events": mirror.stats["BlockRemoved"],
        "lora_stored": mirror.stats["lora_stored"],
        "with_parent": mirror.stats["with_parent"],
        "block_sizes": sorted(mirror.block_sizes),
    }
    if not result["ok"]:
        result["only_events"] = len(list((mine - server).elements()))
        result["only_server"] = len(list((server - mine).elements()))
    print(json.dumps(result))
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
