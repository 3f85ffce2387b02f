// --kv-events-config as vLLM spells it, and the msgpack layout of a batch (issue #39). The e2e
// test decodes real batches with Python's msgpack; here each field's place and type is pinned.
#include <gtest/gtest.h>

#include <msgpack.hpp>
#include <stdexcept>
#include <string>

#include "kvevents/kv_event_encoding.h"
#include "kvevents/kv_events_config.h"

namespace ps {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_kv_events_config(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted " << text;
  return "";
}

TEST(KvEventsConfig, VllmDefaults) {
  KvEventsConfig on = parse_kv_events_config(R"({"enable_kv_cache_events": true})");
  EXPECT_TRUE(on.enabled);
  EXPECT_EQ(on.publisher, "zmq");  // vLLM's default once enabled
  EXPECT_EQ(on.endpoint, "tcp://*:5557");
  EXPECT_FALSE(on.replay_endpoint);
  EXPECT_EQ(on.buffer_steps, 10000u);
  EXPECT_EQ(parse_kv_events_config("{}").publisher, "null");
  KvEventsConfig full = parse_kv_events_config(
      R"({"enable_kv_cache_events": true, "publisher": "zmq", "endpoint": "tcp://*:1",
          "replay_endpoint": "tcp://*:2", "topic": "kv", "buffer_steps": 5, "hwm": 7,
          "max_queue_size": 9})");
  EXPECT_EQ(*full.replay_endpoint, "tcp://*:2");
  EXPECT_EQ(full.topic, "kv");
  EXPECT_EQ(full.buffer_steps, 5u);
  EXPECT_EQ(full.hwm, 7);
  EXPECT_EQ(full.max_queue_size, 9u);
}

TEST(KvEventsConfig, ErrorsNameTheField) {
  EXPECT_NE(error_of("{").find("JSON"), std::string::npos);
  EXPECT_NE(error_of("3").find("object"), std::string::npos);
  EXPECT_NE(error_of(R"({"publisher": "kafka"})").find("'publisher'"), std::string::npos);
  EXPECT_NE(error_of(R"({"enable_kv_cache_events": 1})").find("'enable_kv_cache_events'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"buffer_steps": -1})").find("'buffer_steps'"), std::string::npos);
  EXPECT_NE(error_of(R"({"buffer_steps": 1.5})").find("'buffer_steps'"), std::string::npos);
  EXPECT_NE(error_of(R"({"endpoint": 5})").find("'endpoint'"), std::string::npos);
  EXPECT_NE(error_of(R"({"endpoint": ""})").find("'endpoint'"), std::string::npos);
  EXPECT_NE(error_of(R"({"topik": "x"})").find("'topik'"), std::string::npos);
}

TEST(KvEventEncoding, BatchIsVllmsArrayLikeLayout) {
  KvEventBatch batch;
  batch.ts = 1234.5;
  batch.block_size = 2;
  batch.medium = "CPU";
  KvEvent stored;
  stored.block_hashes = {0xffffffffffffffffULL, 7};
  stored.parent_block_hash = 3;
  stored.token_ids = {1, 2, 3, 4};
  stored.lora_id = 42;
  KvEvent first;
  first.block_hashes = {9};
  first.token_ids = {5, 6};
  KvEvent removed;
  removed.kind = KvEvent::Kind::kRemoved;
  removed.block_hashes = {7};
  batch.events = {stored, first, removed};
  const std::string bytes = encode_kv_event_batch(batch);
  msgpack::object_handle h = msgpack::unpack(bytes.data(), bytes.size());
  const msgpack::object& o = h.get();
  ASSERT_EQ(o.type, msgpack::type::ARRAY);
  ASSERT_EQ(o.via.array.size, 2u);
  EXPECT_EQ(o.via.array.ptr[0].type, msgpack::type::FLOAT64);
  EXPECT_DOUBLE_EQ(o.via.array.ptr[0].as<double>(), 1234.5);
  const msgpack::object& events = o.via.array.ptr[1];
  ASSERT_EQ(events.via.array.size, 3u);

  const msgpack::object* e = events.via.array.ptr[0].via.array.ptr;
  ASSERT_EQ(events.via.array.ptr[0].via.array.size, 7u);
  EXPECT_EQ(e[0].as<std::string>(), "BlockStored");
  EXPECT_EQ(e[1].as<std::vector<uint64_t>>(), (std::vector<uint64_t>{0xffffffffffffffffULL, 7}));
  EXPECT_EQ(e[2].as<uint64_t>(), 3u);
  EXPECT_EQ(e[3].as<std::vector<int32_t>>(), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(e[4].as<int>(), 2);
  EXPECT_EQ(e[5].as<int64_t>(), 42);
  EXPECT_EQ(e[6].as<std::string>(), "CPU");

  const msgpack::object* f = events.via.array.ptr[1].via.array.ptr;
  EXPECT_EQ(f[2].type, msgpack::type::NIL);  // a first block has no parent
  EXPECT_EQ(f[5].type, msgpack::type::NIL);  // the base model has no lora_id

  const msgpack::object* r = events.via.array.ptr[2].via.array.ptr;
  ASSERT_EQ(events.via.array.ptr[2].via.array.size, 3u);
  EXPECT_EQ(r[0].as<std::string>(), "BlockRemoved");
  EXPECT_EQ(r[1].as<std::vector<uint64_t>>(), std::vector<uint64_t>{7});
  EXPECT_EQ(r[2].as<std::string>(), "CPU");
}

}  // namespace
}  // namespace ps
