// The safetensors reader and writer on byte buffers and files.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkpoint/safetensors_reader.h"
#include "checkpoint/safetensors_writer.h"
#include "tiny_test_util.h"

namespace ps {
namespace {

std::span<const uint8_t> as_bytes(const std::string& s) {
  return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// A file image: length prefix, the given header text, then `data_bytes` bytes of 0xAB.
std::string image_with_header(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  const uint64_t len = header.size();
  std::memcpy(out.data(), &len, 8);
  return out + header + std::string(data_bytes, '\xAB');
}

std::string serialize(const std::vector<SafetensorsEntry>& entries,
                      const std::map<std::string, std::string>& metadata = {}) {
  std::ostringstream out;
  write_safetensors(out, entries, metadata);
  return out.str();
}

// Expects parse_safetensors to throw a message containing every one of `parts`.
void expect_parse_error(const std::string& image, const std::vector<std::string>& parts) {
  try {
    parse_safetensors(as_bytes(image), "/some/dir/model.safetensors");
    FAIL() << "no error; expected one mentioning " << parts.front();
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("/some/dir/model.safetensors"), std::string::npos) << msg;
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
  }
}

class TwoTensors : public ::testing::Test {
 protected:
  std::vector<float> a_ = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -0.5f};
  std::vector<uint16_t> b_ = {0x3F80, 0xC000, 0x0001, 0x7F80};
  std::vector<SafetensorsEntry> entries() const {
    return {{"a.weight",
             SafetensorsDtype::kF32,
             {2, 3},
             std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(a_.data()), 24)},
            {"b",
             SafetensorsDtype::kBF16,
             {4},
             std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(b_.data()), 8)},
            {"empty", SafetensorsDtype::kI32, {0, 5}, {}}};
  }
};

TEST_F(TwoTensors, RoundTripsThroughWriterAndParser) {
  const std::string image = serialize(entries(), {{"format", "pt"}});
  const SafetensorsHeader h = parse_safetensors(as_bytes(image), "mem");
  EXPECT_EQ(h.data_start % 8, 0u) << "the writer pads the header so data is 8-byte aligned";
  ASSERT_EQ(h.tensors.size(), 3u);
  EXPECT_EQ(h.metadata.at("format"), "pt");

  const SafetensorsTensor* a = h.find("a.weight");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, SafetensorsDtype::kF32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->numel(), 6);
  ASSERT_EQ(a->end - a->begin, 24u);
  EXPECT_EQ(std::memcmp(image.data() + a->begin, a_.data(), 24), 0);

  const SafetensorsTensor* b = h.find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, SafetensorsDtype::kBF16);
  EXPECT_EQ(std::memcmp(image.data() + b->begin, b_.data(), 8), 0);
  EXPECT_EQ(h.find("empty")->numel(), 0);
  EXPECT_EQ(h.find("missing"), nullptr);
}

TEST_F(TwoTensors, FileIsMemoryMappedAndReadBack) {
  testutil::TempDir dir;
  const std::string path = dir.file("x.safetensors");
  write_safetensors_file(path, entries());
  const SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.path(), path);
  const auto bytes = f.bytes(*f.header().find("a.weight"));
  ASSERT_EQ(bytes.size(), 24u);
  EXPECT_EQ(std::memcmp(bytes.data(), a_.data(), 24), 0);
}

TEST(SafetensorsFile, MissingFileNamesThePath) {
  try {
    SafetensorsFile::open("/nonexistent/dir/model.safetensors");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.safetensors"), std::string::npos);
  }
}

TEST(SafetensorsWriter, RejectsDataThatDoesNotMatchTheShape) {
  const std::vector<uint8_t> bytes(10);
  EXPECT_THROW(serialize({{"t", SafetensorsDtype::kF32, {3}, bytes}}), std::invalid_argument);
  EXPECT_THROW(serialize({{"t", SafetensorsDtype::kU8, {10}, bytes},
                          {"t", SafetensorsDtype::kU8, {10}, bytes}}),
               std::invalid_argument);
}

TEST(SafetensorsParse, FileShorterThanTheLengthPrefix) {
  expect_parse_error(std::string(5, '\0'), {"too short"});
}

TEST(SafetensorsParse, HeaderLengthPastTheEndOfTheFile) {
  std::string image =
      image_with_header(R"({"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 2);
  const uint64_t len = image.size();  // 8 more than the header and data hold
  std::memcpy(image.data(), &len, 8);
  expect_parse_error(image, {"header length", "past the end"});
}

TEST(SafetensorsParse, HeaderThatIsNotJson) {
  expect_parse_error(image_with_header("{\"t\": [1, 2", 0), {"not valid JSON"});
  expect_parse_error(image_with_header("[1, 2]", 0), {"not a JSON object"});
}

TEST(SafetensorsParse, UnknownDtypeNamesTheTensor) {
  expect_parse_error(
      image_with_header(R"({"layer.w":{"dtype":"F8","shape":[2],"data_offsets":[0,2]}})", 2),
      {"layer.w", "unknown dtype \"F8\""});
}

TEST(SafetensorsParse, OffsetsThatDisagreeWithTheShape) {
  expect_parse_error(
      image_with_header(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 24),
      {"'w'", "needs 24"});
  expect_parse_error(
      image_with_header(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[4,2]}})", 4),
      {"'w'", "before begin"});
}

TEST(SafetensorsParse, TruncatedDataNamesTheTensor) {
  const std::string header = R"({"first":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("second":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})";
  EXPECT_NO_THROW(parse_safetensors(as_bytes(image_with_header(header, 24)), "ok"));
  expect_parse_error(image_with_header(header, 20), {"'second'", "truncated"});
}

TEST(SafetensorsParse, MalformedEntries) {
  expect_parse_error(
      image_with_header(R"({"w":{"dtype":"U8","shape":[-2],"data_offsets":[0,2]}})", 2),
      {"'w'", "non-negative"});
  expect_parse_error(image_with_header(R"({"w":{"dtype":"U8","shape":[2]}})", 2),
                     {"'w'", "data_offsets"});
  expect_parse_error(image_with_header(R"({"w":{"dtype":7,"shape":[2],"data_offsets":[0,2]}})", 2),
                     {"'w'", "dtype"});
  expect_parse_error(
      image_with_header(
          R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,2]}})", 2),
      {"'w'", "overflows"});
  expect_parse_error(image_with_header(R"({"__metadata__":{"a":1}})", 0), {"__metadata__"});
}

// Every prefix and many random corruptions of a valid file either parse into in-bounds tensors
// or throw std::runtime_error: nothing else escapes and nothing reads outside the buffer.
TEST_F(TwoTensors, CorruptedImagesFailCleanly) {
  const std::string good = serialize(entries(), {{"k", "v"}});
  std::mt19937 rng(1234);
  int parsed = 0;
  int rejected = 0;
  auto check = [&](const std::string& image) {
    try {
      const SafetensorsHeader h = parse_safetensors(as_bytes(image), "fuzz");
      for (const SafetensorsTensor& t : h.tensors) {
        ASSERT_LE(t.begin, t.end);
        ASSERT_LE(t.end, image.size());
        ASSERT_GE(t.begin, h.data_start);
      }
      ++parsed;
    } catch (const std::runtime_error&) {
      ++rejected;
    }
  };
  for (size_t n = 0; n <= good.size(); ++n) check(good.substr(0, n));
  for (int i = 0; i < 3000; ++i) {
    std::string image = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) image[rng() % image.size()] = static_cast<char>(rng());
    check(image);
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace ps
