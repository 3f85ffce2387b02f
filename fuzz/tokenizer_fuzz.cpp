// libFuzzer target: the byte-level BPE tokenizer on arbitrary bytes. encode() must not crash on
// any input (invalid UTF-8, NULs, special-token text), every id must be inside the vocabulary,
// and decode(encode(x)) == x: byte-level BPE loses nothing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer.h"

namespace {

std::unique_ptr<ps::Tokenizer> g_tok;

}  // namespace

// A real tokenizer without files: a small BPE learnt from the project's own corpus (the same
// code path as `make-tiny-model`, with fewer merges so start-up takes well under a second), or
// PAGEDSERVE_FUZZ_TOKENIZER=path/tokenizer.json to fuzz a real model's tokenizer.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* path = std::getenv("PAGEDSERVE_FUZZ_TOKENIZER")) {
    g_tok = std::make_unique<ps::Tokenizer>(ps::Tokenizer::from_file(path));
  } else {
    ps::BpeTrainOptions o;
    o.vocab_size = 1024;
    std::string corpus = ps::tiny_model_corpus().substr(0, 200000);
    g_tok = std::make_unique<ps::Tokenizer>(
        ps::Tokenizer::from_json_text(ps::train_byte_level_bpe(corpus, o), "fuzz"));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<int32_t> ids = g_tok->encode(text);
  for (int32_t id : ids) {
    if (id < 0 || id >= g_tok->vocab_size()) __builtin_trap();  // id outside the vocabulary
  }
  if (g_tok->decode(ids, /*skip_special_tokens=*/false) != text) __builtin_trap();  // lossy
  return 0;
}
