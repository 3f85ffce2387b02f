// The schema corpus driver for tests/e2e/structured_schema_corpus.sh (issue #18): compiles each
// schema of a folder with json_schema_to_gbnf and the grammar matcher, and
//   structured_corpus generate --tokenizer T.json --schemas DIR --out OUT.jsonl
//                              [--samples N] [--max-tokens M] [--seed S] [--shard I/N]
//     samples outputs per schema (until N finished, at most 2N + 2) the way a random-weight model
//     at temperature 1 would under the grammar's mask: a uniformly random allowed token, favouring
//     the end so that most outputs finish within M tokens: EOS is taken (p 0.9) whenever the
//     grammar allows it; with p 1/2 a token after which the output may end is looked for (closing
//     tokens first); else with p 1/2 the choice is among the allowed tokens holding one of " } ] @
//     . One line per output: {"schema","sample","text","finished","tokens"}.
//   structured_corpus accepts --schemas DIR --in IN.jsonl --out OUT.jsonl
//     for each line {"schema": FILE, "text"} or {"regex", "text"}: {"accepted": bool} — the
//     whole text matches (accept_bytes, then can_terminate).
// Errors (a schema that does not compile, a dead end with no allowed token) go to stderr and
// make the exit status 1.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "structured/grammar_compiler.h"
#include "structured/grammar_matcher.h"
#include "structured/json_schema_to_gbnf.h"
#include "tokenizer/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> parse_flags(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 2; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  return flags;
}

std::string need(const std::map<std::string, std::string>& f, const std::string& name) {
  auto it = f.find(name);
  if (it == f.end()) throw std::runtime_error("missing flag " + name);
  return it->second;
}

std::vector<fs::path> schema_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string schema_gbnf(const fs::path& file) {
  return ps::json_schema_to_gbnf_text(read_file(file));
}

int32_t eos_id(const ps::Tokenizer& tok, const fs::path& tokenizer_json) {
  fs::path config = tokenizer_json.parent_path() / "tokenizer_config.json";
  std::vector<std::string> names;
  if (fs::exists(config)) {
    json c = json::parse(read_file(config));
    if (c.contains("eos_token")) {
      const auto& e = c["eos_token"];
      names.push_back(e.is_object() ? e.value("content", "") : e.get<std::string>());
    }
  }
  names.insert(names.end(), {"<|im_end|>", "<|endoftext|>", "</s>"});
  for (const auto& n : names) {
    if (auto id = tok.token_to_id(n)) return *id;
  }
  throw std::runtime_error("no EOS token found in " + tokenizer_json.string());
}

// A token after which the output could end: the closing tokens first, then up to 256 random
// allowed ones; -1 if none of those.
int32_t finishing_token(const ps::GrammarMatcher& m, const std::vector<int32_t>& closers,
                        const std::vector<int32_t>& allowed, std::mt19937_64& rng) {
  std::vector<int32_t> candidates(closers);
  for (int i = 0; i < 256 && !allowed.empty(); ++i) {
    candidates.push_back(
        allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)]);
  }
  std::shuffle(candidates.begin(), candidates.begin() + closers.size(), rng);
  for (int32_t id : candidates) {
    ps::GrammarMatcher probe(m);
    if (probe.accept_token(id) && probe.can_terminate()) return id;
  }
  return -1;
}

int generate(const std::map<std::string, std::string>& f) {
  fs::path tok_path = need(f, "--tokenizer");
  ps::Tokenizer tok = ps::Tokenizer::from_file(tok_path.string());
  int samples = f.count("--samples") ? std::stoi(f.at("--samples")) : 3;
  int max_tokens = f.count("--max-tokens") ? std::stoi(f.at("--max-tokens")) : 96;
  std::mt19937_64 rng(f.count("--seed") ? std::stoull(f.at("--seed")) : 1);
  int32_t eos = eos_id(tok, tok_path);
  std::vector<int32_t> specials;
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    if (tok.is_special(id) && id != eos) specials.push_back(id);
  }
  auto bytes = tok.bytes_table();
  std::vector<bool> closing(bytes->size());
  for (size_t id = 0; id < bytes->size(); ++id) {
    closing[id] = (*bytes)[id].find_first_of("\"}]@.") != std::string::npos;
  }
  // The compile-time bound is wall-clock and has its own tests; on a loaded shared test machine a
  // 151k-token mask precompute that takes 1 s of CPU can take 20 s of wall time.
  ps::CompileLimits limits;
  limits.max_compile_seconds = 600;
  ps::GrammarCompiler compiler(bytes, {eos}, limits, specials);
  std::ofstream out(need(f, "--out"));
  int errors = 0;
  std::uniform_real_distribution<double> coin(0, 1);
  // --shard I/N: only every N-th schema from the I-th, so N processes share the work.
  size_t shard = 0, shards = 1;
  if (f.count("--shard")) {
    const std::string& v = f.at("--shard");
    shard = std::stoul(v.substr(0, v.find('/')));
    shards = std::stoul(v.substr(v.find('/') + 1));
    if (shards == 0 || shard >= shards) throw std::runtime_error("--shard wants I/N with I < N");
  }
  auto files = schema_files(need(f, "--schemas"));
  for (size_t fi = shard; fi < files.size(); fi += shards) {
    const auto& file = files[fi];
    std::shared_ptr<const ps::CompiledGrammar> g;
    try {
      g = compiler.compile({ps::ConstraintSpec::Kind::kGbnf, schema_gbnf(file), {}, {}});
    } catch (const std::exception& e) {
      std::cerr << file.filename().string() << ": " << e.what() << "\n";
      ++errors;
      continue;
    }
    // Up to 2N + 2 attempts for N finished outputs: long schemas rarely end at random.
    int finished_count = 0;
    for (int s = 0; s < 2 * samples + 2 && finished_count < samples; ++s) {
      ps::GrammarMatcher m(g);
      std::vector<uint32_t> mask(m.mask_words());
      std::string text;
      bool finished = false;
      int n = 0;
      std::vector<int32_t> allowed, closers;
      for (; n < max_tokens; ++n) {
        if (m.is_finished()) {
          finished = true;
          break;
        }
        m.fill_next_token_bitmask(mask.data());
        allowed.clear();
        closers.clear();
        bool eos_ok = false;
        for (size_t w = 0; w < mask.size(); ++w) {
          for (uint32_t bits = mask[w]; bits; bits &= bits - 1) {
            int32_t id = static_cast<int32_t>(w * 32 + __builtin_ctz(bits));
            if (id == eos) {
              eos_ok = true;
            } else if (static_cast<size_t>(id) < bytes->size()) {
              allowed.push_back(id);
              if (closing[id]) closers.push_back(id);
            }
          }
        }
        if (eos_ok != m.can_terminate()) {
          std::cerr << file.filename().string() << ": EOS in the mask disagrees with "
                    << "can_terminate() after " << json(text).dump() << "\n";
          ++errors;
        }
        if (eos_ok && (allowed.empty() || coin(rng) < 0.9)) {
          finished = true;
          break;
        }
        if (allowed.empty()) {
          std::cerr << file.filename().string() << ": dead end (no token allowed) after "
                    << json(text).dump() << "\n";
          ++errors;
          break;
        }
        int32_t id = -1;
        if (coin(rng) < 0.5) id = finishing_token(m, closers, allowed, rng);
        if (id < 0) {
          const auto& pool = !closers.empty() && coin(rng) < 0.5 ? closers : allowed;
          id = pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
        }
        if (!m.accept_token(id)) {
          std::cerr << file.filename().string() << ": the mask allowed token " << id
                    << " but accept_token refused it\n";
          ++errors;
          break;
        }
        text += (*bytes)[id];
      }
      finished_count += finished;
      json line = {{"schema", file.filename().string()},
                   {"sample", s},
                   {"text", text},
                   {"finished", finished},
                   {"tokens", n}};
      out << line.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    }
  }
  return errors ? 1 : 0;
}

std::shared_ptr<const std::vector<std::string>> byte_vocab() {
  auto v = std::make_shared<std::vector<std::string>>();
  for (int b = 0; b < 256; ++b) v->push_back(std::string(1, static_cast<char>(b)));
  v->push_back("</s>");
  return v;
}

int accepts(const std::map<std::string, std::string>& f) {
  fs::path dir = need(f, "--schemas");
  auto vocab = byte_vocab();
  ps::GrammarCompiler compiler(vocab, {static_cast<int32_t>(vocab->size() - 1)});
  std::ifstream in(need(f, "--in"));
  std::ofstream out(need(f, "--out"));
  std::string line;
  int errors = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json q = json::parse(line);
    json answer = json::object();
    try {
      std::string gbnf = q.contains("regex") ? ps::regex_to_gbnf(q["regex"].get<std::string>())
                                             : schema_gbnf(dir / q["schema"].get<std::string>());
      auto g = compiler.compile({ps::ConstraintSpec::Kind::kGbnf, gbnf, {}, {}});
      ps::GrammarMatcher m(g);
      answer["accepted"] = m.accept_bytes(q["text"].get<std::string>()) && m.can_terminate();
    } catch (const std::exception& e) {
      answer["error"] = e.what();
      ++errors;
    }
    out << answer.dump() << "\n";
  }
  return errors ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string cmd = argc > 1 ? argv[1] : "";
    auto flags = parse_flags(argc, argv);
    if (cmd == "generate") return generate(flags);
    if (cmd == "accepts") return accepts(flags);
    std::cerr << "usage: structured_corpus generate|accepts --flag value ...\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "structured_corpus: " << e.what() << "\n";
    return 1;
  }
}
