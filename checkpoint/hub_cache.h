#pragma once
// Finds a Hugging Face Hub model id ("Qwen/Qwen3-0.6B") in the local Hub cache, the folder tree
// huggingface_hub writes: <cache>/models--Qwen--Qwen3-0.6B/{refs/main, snapshots/<commit>/...}.
// Never touches the network: a model that is not downloaded is an error that lists every place
// looked. Torch-free; the CLI calls it where --model is not an existing directory.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ps {

// The cache folders to search, in order, from the environment (huggingface_hub's variables):
// $HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE, $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub,
// $HOME/.cache/huggingface/hub; unset variables are skipped, duplicates dropped.
// `env` maps variable names to values (tests pass their own; the CLI passes the real ones).
std::vector<std::string> hub_cache_roots(const std::map<std::string, std::string>& env);
std::map<std::string, std::string> hub_environment();  // the process's values of those variables

// True for names the Hub could hold: "name" or "org/name", each part of letters, digits, '-',
// '_', '.', not starting with '.' or '-' (so "./x", "/abs", "a/b/c" are never Hub ids).
bool looks_like_hub_id(const std::string& name);

struct HubLookup {
  std::optional<std::string> snapshot;  // the snapshot folder, when found
  std::vector<std::string> looked;      // "path: why it did not serve" for each place tried
};

// The snapshot of `repo_id` at `revision` ("main" by default: a branch or tag name read from
// refs/<revision>, or a commit hash naming snapshots/<hash> directly), in the first root that has
// it with a config.json inside.
HubLookup find_in_hub_cache(const std::string& repo_id, const std::string& revision,
                            const std::vector<std::string>& roots);

}  // namespace ps
