"""Checks a `pagedserve export` .pth with torch.load: names, dtypes, values and the tied head.

usage: /usr/bin/python3 check_export.py EXPORTED.pth ORIGINAL.pth minimind|hf
ORIGINAL is the MiniMind-named fp32 state_dict make_fixtures.py saved.
"""
import sys

import torch

exported = torch.load(sys.argv[1])
original = torch.load(sys.argv[2])
names = sys.argv[3]
original = {k: v for k, v in original.items() if k != "freqs_cos"}
assert isinstance(exported, dict), type(exported)
if names == "minimind":
    assert set(exported) == set(original), sorted(set(exported) ^ set(original))
    for k, v in original.items():
        assert exported[k].dtype == torch.float32, (k, exported[k].dtype)
        assert torch.equal(exported[k], v), k
    # nn.Module.state_dict() semantics: the tied head is the embedding's storage.
    assert exported["output.weight"].data_ptr() == exported["tok_embeddings.weight"].data_ptr()
else:
    assert "model.embed_tokens.weight" in exported and "lm_head.weight" in exported
    assert torch.equal(exported["model.layers.1.mlp.down_proj.weight"],
                       original["layers.1.feed_forward.w2.weight"])
print("export ok:", len(exported), "tensors")
