// Adapters refused at load with a message naming the file and tensor (issue #22), and the
// registry's own refusals: a taken name, no free slot, an unknown name.
#include <gtest/gtest.h>

#include "engine/lora_registry.h"
#include "tests/lora/lora_fixtures.h"

namespace ps {
namespace {

using lora_test::adapter_path;
using lora_test::base_config;

std::string load_error(const std::string& name, int32_t max_rank) {
  try {
    load_lora_adapter(base_config(), adapter_path(name), max_rank);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

void expect_has(const std::string& msg, const std::string& part) {
  EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
}

TEST(LoraLoad, RankOverMaxLoraRankNamesTheTensorAndTheFlag) {
  const std::string msg = load_error("rank32", 16);
  expect_has(msg, "rank32/adapter_model.safetensors");
  expect_has(msg, "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
  expect_has(msg, "--max-lora-rank 16");
  EXPECT_EQ(load_error("rank32", 32), "");  // at the limit is fine
}

TEST(LoraLoad, ShapeMismatchNamesTheTensorAndTheExpectedShape) {
  const std::string msg = load_error("badshape", 64);
  expect_has(msg, "'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight' [4, 72]");
  expect_has(msg, "do not fit model.layers.0.self_attn.q_proj.weight [64, 64]");
}

TEST(LoraLoad, AnotherArchitecturesAdapterNamesTheTensor) {
  const std::string msg = load_error("gpt2", 64);
  expect_has(msg, "base_model.model.transformer.h.0.attn.c_attn.lora_A.weight");
  expect_has(msg, "not a linear layer of the model");
}

TEST(LoraLoad, ReportsRankScaleAndModules) {
  const auto beta = load_lora_adapter(base_config(), adapter_path("beta"), 64);
  EXPECT_EQ(beta->info.rank, 4);
  EXPECT_FLOAT_EQ(beta->info.scale, 4.0f);   // rsLoRA: 8 / sqrt(4)
  EXPECT_EQ(beta->info.modules.size(), 6u);  // gate, up, down x 2 layers
  const auto gamma = load_lora_adapter(base_config(), adapter_path("gamma"), 64);
  EXPECT_FLOAT_EQ(gamma->info.scale, 1.0f);  // no adapter_config.json: alpha = r
  EXPECT_EQ(gamma->info.modules.back(), "model.layers.0.self_attn.v_proj.weight");
}

TEST(LoraRegistry, RefusesATakenNameAFullTableAndUnknownNames) {
  auto reg = std::make_shared<LoraRegistry>(2);
  const auto a = load_lora_adapter(base_config(), adapter_path("alpha"), 64);
  EXPECT_FALSE(reg->add("a", a));
  const auto taken = reg->add("a", a);
  ASSERT_TRUE(taken);
  expect_has(*taken, "already loaded");
  EXPECT_FALSE(reg->add("b", a));
  const auto full = reg->add("c", a);
  ASSERT_TRUE(full);
  expect_has(*full, "--max-loras");
  EXPECT_EQ(reg->remove("nope"), std::nullopt);
  EXPECT_EQ(reg->acquire("nope"), nullptr);
  ASSERT_EQ(reg->list().size(), 2u);
  EXPECT_EQ(reg->list()[0].name, "a");
  EXPECT_EQ(reg->list()[1].slot, 1);
}

TEST(LoraRegistry, LeasesCountRequestsAndDrainingFreesTheSlotAtTheLastOne) {
  auto reg = std::make_shared<LoraRegistry>(1);
  const auto a = load_lora_adapter(base_config(), adapter_path("alpha"), 64);
  ASSERT_FALSE(reg->add("a", a));
  auto l1 = reg->acquire("a");
  auto l2 = reg->acquire("a");
  ASSERT_TRUE(l1 && l2);
  EXPECT_EQ(l1->identity(), l2->identity());
  EXPECT_EQ(reg->list()[0].requests, 2);
  EXPECT_EQ(reg->remove("a"), std::optional<int32_t>(2));
  EXPECT_TRUE(reg->list().empty());
  EXPECT_EQ(reg->num_slots_held(), 1);
  l1.reset();
  EXPECT_EQ(reg->num_slots_held(), 1);
  l2.reset();
  EXPECT_EQ(reg->num_slots_held(), 0);
  // Reloading the same name is a new load: a new identity, so a fresh prefix-cache root.
  ASSERT_FALSE(reg->add("a", a));
  auto l3 = reg->acquire("a");
  EXPECT_GT(l3->identity(), 1u);
}

}  // namespace
}  // namespace ps
