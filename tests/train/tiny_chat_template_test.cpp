// The tiny model's chat template: ChatML without tools, a compact tools block, hermes tool calls
// and tool results with them; and the examples that go through it.
#include "train/tiny_chat_template.h"

#include <gtest/gtest.h>

#include <fstream>

#include "chat/chat_template.h"
#include "chat/tool_call_parser.h"
#include "tests/train/train_test_util.h"
#include "train/chat_data.h"

namespace ps {
namespace {

using json = nlohmann::ordered_json;

json tools() {
  return json::parse(R"([
    {"type": "function", "function": {"name": "get_weather",
      "description": "Get the current weather in a city.",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                     "required": ["city"]}}},
    {"type": "function", "function": {"name": "calculate",
      "parameters": {"type": "object", "properties": {"expression": {"type": "string"},
                                                      "precision": {"type": "integer"}}}}}])");
}

const std::string kToolsBlock =
    "<|im_start|>system\nTools:\n"
    "- get_weather(city): Get the current weather in a city.\n"
    "- calculate(expression, precision)\n"
    "To call one, reply <tool_call>\n{\"name\": ..., \"arguments\": {...}}\n</tool_call>"
    "<|im_end|>\n";

std::string render(const json& messages, const json& tool_list, bool generation_prompt) {
  chat::ChatPromptRequest r;
  r.messages = messages;
  r.tools = tool_list;
  r.add_generation_prompt = generation_prompt;
  return tiny_chat_renderer().render(r);
}

json weather_call(const json& arguments) {
  return {{"role", "assistant"},
          {"content", nullptr},
          {"tool_calls",
           json::array({{{"id", "call_1"},
                         {"type", "function"},
                         {"function", {{"name", "get_weather"}, {"arguments", arguments}}}}})}};
}

TEST(TinyChatTemplate, WithoutToolsItIsChatML) {
  const std::vector<std::vector<ChatMessage>> chats = {
      {{"user", "你是谁？"}},
      {{"system", "Answer briefly."}, {"user", "Hello!"}},
      {{"user", "Hi"}, {"assistant", "Hello!"}, {"user", "What is 2 + 3?"}},
  };
  const ChatTemplate chatml(ChatTemplateKind::kChatML);
  const chat::ChatRenderer builtin = *chat::ChatRenderer::builtin("chatml");
  for (const auto& chat : chats) {
    json messages = json::array();
    for (const ChatMessage& m : chat)
      messages.push_back({{"role", m.role}, {"content", m.content}});
    for (bool gen : {true, false}) {
      EXPECT_EQ(render(messages, json(), gen), chatml.render(chat, gen));
      chat::ChatPromptRequest r;
      r.messages = messages;
      r.add_generation_prompt = gen;
      EXPECT_EQ(render(messages, json(), gen), builtin.render(r));
      // An empty tools list is no tools.
      EXPECT_EQ(render(messages, json::array(), gen), chatml.render(chat, gen));
    }
  }
}

TEST(TinyChatTemplate, ToolsAddOneCompactSystemBlock) {
  const json user = {{"role", "user"}, {"content", "What's the weather in Paris?"}};
  EXPECT_EQ(render(json::array({user}), tools(), true),
            kToolsBlock +
                "<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n"
                "<|im_start|>assistant\n");
  // A client's system message goes into the same block, before the tools.
  const json sys = {{"role", "system"}, {"content", "Be brief."}};
  const std::string with_system = render(json::array({sys, user}), tools(), true);
  EXPECT_EQ(with_system.rfind("<|im_start|>system\nBe brief.\nTools:\n- get_weather(city)", 0), 0u)
      << with_system;
  EXPECT_EQ(with_system.find("<|im_start|>system", 1), std::string::npos) << with_system;
  // Tools without a "function" wrapper (transformers accepts bare functions too).
  const json bare = json::array({tools()[0]["function"]});
  EXPECT_NE(render(json::array({user}), bare, true).find("- get_weather(city): Get"),
            std::string::npos);
}

TEST(TinyChatTemplate, ToolCallsAreHermesAndResultsAUserTurn) {
  const json user = {{"role", "user"}, {"content", "Weather in Paris?"}};
  const json result = {
      {"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "{\"temperature\": 18}"}};
  const std::string call_text =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
      "</tool_call>";
  const std::string expected = kToolsBlock +
                               "<|im_start|>user\nWeather in Paris?<|im_end|>\n"
                               "<|im_start|>assistant\n" +
                               call_text +
                               "<|im_end|>\n"
                               "<|im_start|>user\n<tool_response>\n{\"temperature\": 18}\n"
                               "</tool_response><|im_end|>\n<|im_start|>assistant\n";
  // Arguments as the JSON string OpenAI clients send back, or as an object (json.dumps form).
  EXPECT_EQ(
      render(json::array({user, weather_call("{\"city\": \"Paris\"}"), result}), tools(), true),
      expected);
  EXPECT_EQ(render(json::array({user, weather_call({{"city", "Paris"}}), result}), tools(), true),
            expected);

  // Two calls: one per line, after any content; two results: one turn.
  json two = weather_call("{\"city\": \"Paris\"}");
  two["content"] = "Checking.";
  two["tool_calls"].push_back(two["tool_calls"][0]);
  two["tool_calls"][1]["function"]["arguments"] = "{\"city\": \"Rome\"}";
  const std::string rendered = render(json::array({user, two, result, result}), tools(), false);
  EXPECT_NE(rendered.find("<|im_start|>assistant\nChecking.\n" + call_text +
                          "\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                          "\"Rome\"}}\n</tool_call><|im_end|>\n"),
            std::string::npos)
      << rendered;
  EXPECT_NE(rendered.find("<|im_start|>user\n<tool_response>\n{\"temperature\": 18}\n"
                          "</tool_response>\n<tool_response>\n{\"temperature\": 18}\n"
                          "</tool_response><|im_end|>\n"),
            std::string::npos)
      << rendered;
}

TEST(TinyChatTemplate, ServerPicksTheHermesParser) {
  EXPECT_NE(tiny_chat_template_source().find("<tool_call>"), std::string::npos);
  EXPECT_EQ(chat::detect_tool_call_format(tiny_chat_template_source()),
            chat::ToolCallFormat::kHermes);
}

TEST(TinyChatTemplate, RenderChatSplitsPromptAndReply) {
  const json user = {{"role", "user"}, {"content", "Weather in Paris?"}};
  const RenderedChat r = render_chat(
      tiny_chat_renderer(), json::array({user, weather_call("{\"city\": \"Paris\"}")}), tools());
  EXPECT_EQ(r.prompt, render(json::array({user}), tools(), true));
  EXPECT_EQ(r.reply,
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
            "</tool_call>");
  // The parser the server uses reads that reply back as the call.
  chat::ToolCallParser parser(chat::ToolCallFormat::kHermes);
  parser.feed(r.reply);
  parser.finish();
  ASSERT_EQ(parser.calls().size(), 1u);
  EXPECT_EQ(parser.calls()[0].name, "get_weather");
  EXPECT_EQ(parser.calls()[0].arguments, "{\"city\": \"Paris\"}");
}

// --- examples with tools ----------------------------------------------------------------------

std::string write_file(const testutil::TempDir& dir, const std::string& text) {
  const std::string path = dir.file("data.jsonl");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string tool_line(const json& messages) {
  return json({{"messages", messages}, {"tools", tools()}, {"kind", "tool_call"}}).dump() + "\n";
}

TEST(TinyChatData, ReadsToolDialogues) {
  testutil::TempDir dir;
  const json user = {{"role", "user"}, {"content", "Weather in Paris?"}};
  const json result = {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "18 C"}};
  const std::string path =
      write_file(dir, tool_line(json::array({user, weather_call("{\"city\": \"Paris\"}")})) +
                          tool_line(json::array({user,
                                                 weather_call("{\"city\": \"Paris\"}"),
                                                 result,
                                                 {{"role", "assistant"}, {"content", "18 C."}}})));
  const std::vector<ChatExample> ex = read_chat_jsonl(path);
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].question(), "Weather in Paris?");
  EXPECT_EQ(ex[0].answer(),
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
            "</tool_call>");
  EXPECT_EQ(ex[0].tools, tools());
  EXPECT_EQ(ex[1].question(), "18 C");  // the reply answers the tool's result
  EXPECT_EQ(ex[1].answer(), "18 C.");
  EXPECT_EQ(ex[1].prompt_messages().size(), 3u);
}

TEST(TinyChatData, BadToolExamplesAreClearErrors) {
  testutil::TempDir dir;
  const json user = {{"role", "user"}, {"content", "Hi"}};
  const json reply = {{"role", "assistant"}, {"content", "Hello"}};
  json user_with_calls = weather_call("{}");
  user_with_calls["role"] = "user";
  json calls_not_array = weather_call("{}");
  calls_not_array["tool_calls"] = "get_weather";
  json call_without_name = weather_call("{}");
  call_without_name["tool_calls"][0]["function"].erase("name");
  json call_bad_arguments = weather_call("{}");
  call_bad_arguments["tool_calls"][0]["function"]["arguments"] = 3;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {tool_line(json::array({user_with_calls, reply})), "only assistant messages"},
      {tool_line(json::array({user, calls_not_array})), "tool_calls"},
      {tool_line(json::array({user, call_without_name})), "name"},
      {tool_line(json::array({user, call_bad_arguments})), "arguments"},
      {tool_line(json::array({user, reply, reply})), "follow a user or tool"},
      {tool_line(json::array({user, {{"role", "robot"}, {"content", "x"}}})), "robot"},
      {json({{"messages", json::array({user, reply})}, {"tools", "get_weather"}}).dump() + "\n",
       "\"tools\" must be an array"},
      {json({{"messages", json::array({user, reply})}, {"tools", json::array({1})}}).dump() + "\n",
       "each tool"},
      {json({{"question", "Hi"}, {"answer", "Hello"}, {"tools", tools()}}).dump() + "\n",
       "\"messages\" form"},
  };
  for (const auto& [line, words] : cases) {
    const std::string path = write_file(dir, "{\"question\": \"a\", \"answer\": \"b\"}\n" + line);
    try {
      read_chat_jsonl(path);
      ADD_FAILURE() << "no error for " << line;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ":2: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
}

TEST(TinyChatData, LossCoversExactlyTheToolCall) {
  std::vector<ChatExample> examples = traintest::small_examples();
  const json user = {{"role", "user"}, {"content", "Weather in Paris?"}};
  examples.push_back(ChatExample::make(json::array({user, weather_call("{\"city\": \"Paris\"}")}),
                                       tools(), "tool_call"));
  BpeTrainOptions o;
  o.vocab_size = 400;
  o.added_tokens = {kToolCallOpen, kToolCallClose};
  const Tokenizer tok =
      Tokenizer::from_json_text(train_byte_level_bpe(tokenizer_corpus(examples), o), "test");
  const ChatExample& ex = examples.back();
  const TokenizedExample t = tokenize_example(tok, ex, 400);
  const RenderedChat r = render_chat(tiny_chat_renderer(), ex.messages, ex.tools);
  // Encoded in two parts, equal to the whole conversation encoded at once.
  EXPECT_EQ(t.tokens, tok.encode(r.prompt + r.reply + "<|im_end|>"));
  const size_t n = tok.encode(r.prompt).size();
  std::vector<int32_t> trained;
  for (size_t i = 0; i < t.targets.size(); ++i) {
    if (i + 1 < n || i + 1 == t.tokens.size()) {
      EXPECT_EQ(t.targets[i], kIgnoreTarget) << i;
    } else {
      EXPECT_EQ(t.targets[i], t.tokens[i + 1]) << i;
      trained.push_back(t.targets[i]);
    }
  }
  // The call opens with its one added token, non-special, so it survives skip_special_tokens.
  ASSERT_FALSE(trained.empty());
  EXPECT_EQ(trained.front(), 3);
  EXPECT_EQ(tok.token_bytes(3), kToolCallOpen);
  EXPECT_FALSE(tok.is_special(3));
  EXPECT_EQ(trained.back(), 2);  // <|im_end|>
  EXPECT_EQ(tok.decode(trained, /*skip_special_tokens=*/true), ex.answer());
}

}  // namespace
}  // namespace ps
