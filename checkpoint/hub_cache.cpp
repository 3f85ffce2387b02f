#include "checkpoint/hub_cache.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

namespace ps {
namespace fs = std::filesystem;

namespace {

bool is_commit_hash(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool valid_part(const std::string& part) {
  if (part.empty() || part.size() > 96 || part[0] == '.' || part[0] == '-') return false;
  for (char c : part) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return part.find("..") == std::string::npos;
}

}  // namespace

std::vector<std::string> hub_cache_roots(const std::map<std::string, std::string>& env) {
  auto get = [&](const char* key) -> std::string {
    auto it = env.find(key);
    return it == env.end() ? std::string() : it->second;
  };
  std::vector<std::string> candidates;
  if (!get("HF_HUB_CACHE").empty()) candidates.push_back(get("HF_HUB_CACHE"));
  if (!get("HUGGINGFACE_HUB_CACHE").empty()) candidates.push_back(get("HUGGINGFACE_HUB_CACHE"));
  if (!get("HF_HOME").empty()) candidates.push_back((fs::path(get("HF_HOME")) / "hub").string());
  if (!get("XDG_CACHE_HOME").empty()) {
    candidates.push_back((fs::path(get("XDG_CACHE_HOME")) / "huggingface" / "hub").string());
  }
  if (!get("HOME").empty()) {
    candidates.push_back((fs::path(get("HOME")) / ".cache" / "huggingface" / "hub").string());
  }
  std::vector<std::string> roots;
  std::set<std::string> seen;
  for (auto& c : candidates) {
    if (seen.insert(fs::path(c).lexically_normal().string()).second) roots.push_back(c);
  }
  return roots;
}

std::map<std::string, std::string> hub_environment() {
  std::map<std::string, std::string> env;
  for (const char* key :
       {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME"}) {
    if (const char* v = std::getenv(key)) env[key] = v;
  }
  return env;
}

bool looks_like_hub_id(const std::string& name) {
  size_t slash = name.find('/');
  if (slash == std::string::npos) return valid_part(name);
  if (name.find('/', slash + 1) != std::string::npos) return false;
  return valid_part(name.substr(0, slash)) && valid_part(name.substr(slash + 1));
}

HubLookup find_in_hub_cache(const std::string& repo_id, const std::string& revision,
                            const std::vector<std::string>& roots) {
  HubLookup result;
  std::string folder = "models--";
  for (char c : repo_id) {
    if (c == '/') {
      folder += "--";
    } else {
      folder.push_back(c);
    }
  }
  const std::string rev = revision.empty() ? "main" : revision;
  std::error_code ec;
  for (const std::string& root : roots) {
    fs::path repo = fs::path(root) / folder;
    if (!fs::is_directory(repo, ec)) {
      result.looked.push_back(repo.string() + ": no such folder");
      continue;
    }
    std::string commit;
    fs::path ref = repo / "refs" / rev;
    if (rev.find("..") == std::string::npos && fs::is_regular_file(ref, ec)) {
      std::ifstream in(ref);
      std::getline(in, commit);
      while (!commit.empty() && (commit.back() == '\r' || commit.back() == ' ')) commit.pop_back();
      if (!is_commit_hash(commit)) {
        result.looked.push_back(ref.string() + ": does not hold a commit hash");
        continue;
      }
    } else if (is_commit_hash(rev)) {
      commit = rev;
    } else {
      result.looked.push_back(ref.string() + ": no such file (revision '" + rev +
                              "' not downloaded)");
      continue;
    }
    fs::path snapshot = repo / "snapshots" / commit;
    if (!fs::is_directory(snapshot, ec)) {
      result.looked.push_back(snapshot.string() + ": no such folder");
      continue;
    }
    // exists() follows the cache's symlinks into blobs/, so a dangling link counts as missing.
    if (!fs::exists(snapshot / "config.json", ec)) {
      result.looked.push_back(snapshot.string() + ": has no config.json (download incomplete?)");
      continue;
    }
    result.snapshot = snapshot.string();
    return result;
  }
  if (roots.empty()) {
    result.looked.push_back("no cache folder: none of HF_HUB_CACHE, HF_HOME, HOME is set");
  }
  return result;
}

}  // namespace ps
