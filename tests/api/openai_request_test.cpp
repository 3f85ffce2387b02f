// Every client mistake in a completions body must come back as a 4xx ApiError naming the field.
#include "openai/openai_request.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace ps {
namespace {

RequestLimits limits() {
  RequestLimits l;
  l.vocab_size = 100;
  l.max_n = 4;
  return l;
}

OpenAiRequest ok(const std::string& body, Endpoint e = Endpoint::kChat) {
  auto r = parse_openai_request(body, e, limits());
  if (auto* err = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << "unexpected error for " << body << ": " << err->message;
    return {};
  }
  return std::get<OpenAiRequest>(r);
}

ApiError bad(const std::string& body, Endpoint e = Endpoint::kChat) {
  auto r = parse_openai_request(body, e, limits());
  if (!std::holds_alternative<ApiError>(r)) {
    ADD_FAILURE() << "accepted a bad body: " << body;
    return {};
  }
  return std::get<ApiError>(r);
}

const char* kMsgs = R"("messages":[{"role":"user","content":"hi"}])";

std::string chat(const std::string& extra) {
  return std::string("{") + kMsgs + (extra.empty() ? "" : "," + extra) + "}";
}

TEST(OpenAiRequest, ChatDefaultsFollowOpenAi) {
  OpenAiRequest r = ok(chat(""));
  ASSERT_EQ(r.chat.messages.size(), 1u);
  EXPECT_EQ(r.chat.messages[0]["role"], "user");
  EXPECT_EQ(r.chat.messages[0]["content"], "hi");
  EXPECT_TRUE(r.chat.add_generation_prompt);
  EXPECT_FALSE(r.chat.continue_final_message);
  EXPECT_FLOAT_EQ(r.params.temperature, 1.0f);
  EXPECT_EQ(r.params.n, 1);
  EXPECT_FALSE(r.max_tokens_given);
  EXPECT_EQ(r.params.max_tokens, std::numeric_limits<int32_t>::max());  // fit_to_context cuts it
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.want_logprobs);
  EXPECT_EQ(r.params.logprobs, -1);
}

TEST(OpenAiRequest, ReadsEverySamplingField) {
  OpenAiRequest r =
      ok(chat(R"("model":"m","max_tokens":7,"temperature":0.5,"top_p":0.9,"top_k":5,"min_p":0.1,)"
              R"("presence_penalty":1.5,"frequency_penalty":-1,"repetition_penalty":1.2,"seed":42,)"
              R"("n":2,"stop":["a","bc"],"stop_token_ids":[3,4],"min_tokens":2,"ignore_eos":true,)"
              R"("logprobs":true,"top_logprobs":3,"logit_bias":{"7":-100,"8":2.5},"user":"u",)"
              R"("stream":true,"stream_options":{"include_usage":true})"));
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.params.max_tokens, 7);
  EXPECT_TRUE(r.max_tokens_given);
  EXPECT_FLOAT_EQ(r.params.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.params.top_p, 0.9f);
  EXPECT_EQ(r.params.top_k, 5);
  EXPECT_FLOAT_EQ(r.params.min_p, 0.1f);
  EXPECT_FLOAT_EQ(r.params.presence_penalty, 1.5f);
  EXPECT_FLOAT_EQ(r.params.frequency_penalty, -1.0f);
  EXPECT_FLOAT_EQ(r.params.repetition_penalty, 1.2f);
  EXPECT_EQ(r.params.seed, 42u);
  EXPECT_EQ(r.params.n, 2);
  EXPECT_EQ(r.params.stop, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(r.params.stop_token_ids, (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(r.params.min_tokens, 2);
  EXPECT_TRUE(r.params.ignore_eos);
  EXPECT_TRUE(r.want_logprobs);
  EXPECT_EQ(r.params.logprobs, 3);
  EXPECT_FLOAT_EQ(r.params.logit_bias.at(7), -100.0f);
  EXPECT_FLOAT_EQ(r.params.logit_bias.at(8), 2.5f);
  EXPECT_EQ(r.user, "u");
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
}

TEST(OpenAiRequest, MaxCompletionTokensWinsAndNullMeansDefault) {
  EXPECT_EQ(ok(chat(R"("max_tokens":5,"max_completion_tokens":9)")).params.max_tokens, 9);
  OpenAiRequest r = ok(chat(R"("max_tokens":null,"temperature":null,"stop":null)"));
  EXPECT_FALSE(r.max_tokens_given);
  EXPECT_FLOAT_EQ(r.params.temperature, 1.0f);
  EXPECT_TRUE(r.params.stop.empty());
}

TEST(OpenAiRequest, IntegralFloatsAreIntegers) {
  EXPECT_EQ(ok(chat(R"("max_tokens":8.0)")).params.max_tokens, 8);
  EXPECT_EQ(bad(chat(R"("max_tokens":8.5)")).param, "max_tokens");
}

TEST(OpenAiRequest, ContentPartsAndRoles) {
  OpenAiRequest r = ok(R"({"messages":[
      {"role":"system","content":"be brief"},
      {"role":"developer","content":"and kind"},
      {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
      {"role":"assistant","content":null}]})");
  ASSERT_EQ(r.chat.messages.size(), 4u);
  EXPECT_EQ(r.chat.messages[1]["role"], "system");
  // Parts reach the template as sent; the renderer decides whether to join them.
  EXPECT_EQ(r.chat.messages[2]["content"].dump(),
            R"([{"type":"text","text":"a"},{"type":"text","text":"b"}])");
  EXPECT_TRUE(r.chat.messages[3]["content"].is_null());
}

// Tool results, tool calls, names and reasoning in the history go to the template as given, in
// the client's key order.
TEST(OpenAiRequest, HistoryFieldsPassThroughInOrder) {
  OpenAiRequest r = ok(R"({"messages":[
      {"role":"user","name":"ann","content":"weather?"},
      {"role":"assistant","reasoning_content":"hm","content":null,"tool_calls":[
        {"id":"c1","type":"function","function":{"name":"w","arguments":"{}"}}]},
      {"role":"tool","tool_call_id":"c1","content":"sunny"}],
      "chat_template_kwargs":{"enable_thinking":false,"zeta":1,"alpha":2},
      "add_generation_prompt":true})");
  EXPECT_EQ(r.chat.messages.dump(),
            R"([{"role":"user","name":"ann","content":"weather?"},)"
            R"({"role":"assistant","reasoning_content":"hm","content":null,"tool_calls":[)"
            R"({"id":"c1","type":"function","function":{"name":"w","arguments":"{}"}}]},)"
            R"({"role":"tool","tool_call_id":"c1","content":"sunny"}])");
  EXPECT_EQ(r.chat.chat_template_kwargs.dump(), R"({"enable_thinking":false,"zeta":1,"alpha":2})");
}

// reasoning_effort reaches the template as its kwarg (gpt-oss's template reads it), unless
// chat_template_kwargs sets it itself.
TEST(OpenAiRequest, ReasoningEffortBecomesATemplateKwarg) {
  OpenAiRequest r = ok(R"({"messages":[{"role":"user","content":"hi"}],
      "reasoning_effort":"high","chat_template_kwargs":{"enable_thinking":true}})");
  EXPECT_EQ(r.chat.chat_template_kwargs.dump(),
            R"({"enable_thinking":true,"reasoning_effort":"high"})");
  r = ok(R"({"messages":[{"role":"user","content":"hi"}],"reasoning_effort":"low",
      "chat_template_kwargs":{"reasoning_effort":"medium"}})");
  EXPECT_EQ(r.chat.chat_template_kwargs.dump(), R"({"reasoning_effort":"medium"})");
  r = ok(R"({"messages":[{"role":"user","content":"hi"}],"reasoning_effort":null})");
  EXPECT_EQ(r.chat.chat_template_kwargs.dump(), "{}");
}

TEST(OpenAiRequest, ContinueFinalMessage) {
  OpenAiRequest r = ok(R"({"messages":[{"role":"user","content":"hi"},
      {"role":"assistant","content":"Hel"}],
      "add_generation_prompt":false,"continue_final_message":true})");
  EXPECT_TRUE(r.chat.continue_final_message);
  EXPECT_FALSE(r.chat.add_generation_prompt);
}

// Each new 400 with its message.
TEST(OpenAiRequest, ChatTemplateFieldErrors) {
  struct Case {
    const char* body;
    const char* param;
    const char* message;
  };
  const Case cases[] = {
      {R"({"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":[1]})",
       "chat_template_kwargs", "'chat_template_kwargs' must be an object, got array"},
      {R"({"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":{"messages":[]}})",
       "chat_template_kwargs",
       "'chat_template_kwargs' may not set 'messages'; use the request field of that name"},
      {R"({"messages":[{"role":"assistant","content":"a"}],"continue_final_message":true})",
       "continue_final_message",
       "'continue_final_message' and 'add_generation_prompt' cannot both be true; send "
       "'add_generation_prompt': false to continue the final message"},
      {R"({"messages":[{"role":"user","content":"a"}],"continue_final_message":true,)"
       R"("add_generation_prompt":false})",
       "continue_final_message",
       "'continue_final_message' needs the final message to be the assistant's, got 'user'"},
      {R"({"messages":[{"role":"tool"}]})", "messages[0].content",
       "'messages[0].content' is required for role 'tool'"},
      {R"({"messages":[{"role":"user","content":"a","name":5}]})", "messages[0].name",
       "'messages[0].name' must be a string, got number"},
      {R"({"messages":[{"role":"assistant","content":"a","tool_calls":{}}]})",
       "messages[0].tool_calls", "'messages[0].tool_calls' must be an array, got object"},
      {R"({"messages":[{"role":"robot","content":"a"}]})", "messages[0].role",
       "'messages[0].role' is 'robot'; supported roles are system, developer, user, assistant "
       "and tool"},
      {R"({"messages":[{"role":"user","content":"a"}],"documents":"x"})", "documents",
       "'documents' must be an array, got string"},
      {R"({"messages":[{"role":"user","content":"a"}],"reasoning_effort":2})", "reasoning_effort",
       "'reasoning_effort' must be a string, got number"},
      {R"({"messages":[{"role":"user","content":"a"}],"reasoning_effort":"max"})",
       "reasoning_effort",
       "'reasoning_effort' must be one of none, minimal, low, medium, high; got 'max'"},
  };
  for (const Case& c : cases) {
    ApiError e = bad(c.body);
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_EQ(e.message, c.message) << c.body;
    EXPECT_EQ(e.status, 400) << c.body;
  }
}

TEST(OpenAiRequest, CompletionPromptShapes) {
  auto one = ok(R"({"prompt":"hello"})", Endpoint::kCompletion);
  ASSERT_EQ(one.prompts.size(), 1u);
  EXPECT_FALSE(one.prompts[0].is_ids);
  EXPECT_EQ(one.params.max_tokens, 16);  // the legacy endpoint's default
  auto many = ok(R"({"prompt":["a","b"]})", Endpoint::kCompletion);
  EXPECT_EQ(many.prompts.size(), 2u);
  auto ids = ok(R"({"prompt":[1,2,3]})", Endpoint::kCompletion);
  ASSERT_EQ(ids.prompts.size(), 1u);
  EXPECT_TRUE(ids.prompts[0].is_ids);
  EXPECT_EQ(ids.prompts[0].ids, (std::vector<int32_t>{1, 2, 3}));
  auto batch = ok(R"({"prompt":[[1],[2,3]]})", Endpoint::kCompletion);
  ASSERT_EQ(batch.prompts.size(), 2u);
  EXPECT_EQ(batch.prompts[1].ids, (std::vector<int32_t>{2, 3}));
  auto lp = ok(R"({"prompt":"x","logprobs":2})", Endpoint::kCompletion);
  EXPECT_TRUE(lp.want_logprobs);
  EXPECT_EQ(lp.params.logprobs, 2);
  // echo scores the prompt with the output's logprobs count; max_tokens 0 generates nothing.
  auto echo =
      ok(R"({"prompt":"x","logprobs":2,"echo":true,"max_tokens":0})", Endpoint::kCompletion);
  EXPECT_TRUE(echo.echo);
  EXPECT_EQ(echo.params.prompt_logprobs, 2);
  EXPECT_EQ(echo.params.max_tokens, 0);
  EXPECT_FALSE(echo.want_prompt_logprobs) << "no prompt_logprobs field unless asked";
  auto echo_only = ok(R"({"prompt":"x","echo":true})", Endpoint::kCompletion);
  EXPECT_EQ(echo_only.params.prompt_logprobs, -1) << "echo without logprobs scores nothing";
  auto plp =
      ok(R"({"prompt":"x","prompt_logprobs":0,"logprobs":3,"echo":true})", Endpoint::kCompletion);
  EXPECT_TRUE(plp.want_prompt_logprobs);
  EXPECT_EQ(plp.params.prompt_logprobs, 3) << "the larger of the two";
  auto chat_plp = ok(R"({"messages":[{"role":"user","content":"hi"}],"prompt_logprobs":4})");
  EXPECT_TRUE(chat_plp.want_prompt_logprobs);
  EXPECT_EQ(chat_plp.params.prompt_logprobs, 4);
}

struct BadCase {
  const char* body;
  const char* param;
  Endpoint endpoint = Endpoint::kChat;
};

TEST(OpenAiRequest, RejectsBadInputNamingTheField) {
  const BadCase cases[] = {
      {R"({"messages":[{"role":"user","content":"hi"})", ""},  // malformed JSON
      {R"([1,2])", ""},
      {R"("just a string")", ""},
      {R"({})", "messages"},
      {R"({"messages":[]})", "messages"},
      {R"({"messages":"hi"})", "messages"},
      {R"({"messages":[{"content":"hi"}]})", "messages[0].role"},
      {R"({"messages":[{"role":"function","content":"hi"}]})", "messages[0].role"},
      {R"({"messages":[{"role":"user"}]})", "messages[0].content"},
      {R"({"messages":[{"role":"user","content":5}]})", "messages[0].content"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})",
       "messages[0].content[0].type"},
      {R"({"model":5,"messages":[{"role":"user","content":"hi"}]})", "model"},
      {R"({"messages":[{"role":"user","content":"hi"}],"temperature":"hot"})", "temperature"},
      {R"({"messages":[{"role":"user","content":"hi"}],"temperature":2.5})", "temperature"},
      {R"({"messages":[{"role":"user","content":"hi"}],"temperature":-0.1})", "temperature"},
      {R"({"messages":[{"role":"user","content":"hi"}],"top_p":0})", "top_p"},
      {R"({"messages":[{"role":"user","content":"hi"}],"top_p":1.5})", "top_p"},
      {R"({"messages":[{"role":"user","content":"hi"}],"top_k":-2})", "top_k"},
      {R"({"messages":[{"role":"user","content":"hi"}],"top_k":1.5})", "top_k"},
      {R"({"messages":[{"role":"user","content":"hi"}],"min_p":2})", "min_p"},
      {R"({"messages":[{"role":"user","content":"hi"}],"presence_penalty":3})", "presence_penalty"},
      {R"({"messages":[{"role":"user","content":"hi"}],"frequency_penalty":-3})",
       "frequency_penalty"},
      {R"({"messages":[{"role":"user","content":"hi"}],"repetition_penalty":0})",
       "repetition_penalty"},
      {R"({"messages":[{"role":"user","content":"hi"}],"seed":"x"})", "seed"},
      {R"({"messages":[{"role":"user","content":"hi"}],"n":5})", "n"},
      {R"({"messages":[{"role":"user","content":"hi"}],"n":0})", "n"},
      {R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":0})", "max_tokens"},
      {R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":"10"})", "max_tokens"},
      {R"({"messages":[{"role":"user","content":"hi"}],"max_completion_tokens":-1})",
       "max_completion_tokens"},
      {R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"min_tokens":4})",
       "min_tokens"},
      {R"({"messages":[{"role":"user","content":"hi"}],"stop":5})", "stop"},
      {R"({"messages":[{"role":"user","content":"hi"}],"stop":[""]})", "stop"},
      {R"({"messages":[{"role":"user","content":"hi"}],"stop":["a",1]})", "stop"},
      {R"({"messages":[{"role":"user","content":"hi"}],"stop_token_ids":[100]})", "stop_token_ids"},
      {R"({"messages":[{"role":"user","content":"hi"}],"ignore_eos":"yes"})", "ignore_eos"},
      {R"({"messages":[{"role":"user","content":"hi"}],"logprobs":1})", "logprobs"},
      {R"({"messages":[{"role":"user","content":"hi"}],"top_logprobs":2})", "top_logprobs"},
      {R"({"messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":21})",
       "top_logprobs"},
      {R"({"messages":[{"role":"user","content":"hi"}],"logit_bias":{"x":1}})", "logit_bias"},
      {R"({"messages":[{"role":"user","content":"hi"}],"logit_bias":{"5":101}})", "logit_bias"},
      {R"({"messages":[{"role":"user","content":"hi"}],"logit_bias":{"500":1}})", "logit_bias"},
      {R"({"messages":[{"role":"user","content":"hi"}],"stream":"true"})", "stream"},
      {R"({"messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}})",
       "stream_options"},
      {R"({"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function"}]})",
       "tools[0].function"},
      {R"({"messages":[{"role":"user","content":"hi"}],"user":7})", "user"},
      {R"({})", "prompt", Endpoint::kCompletion},
      {R"({"prompt":""})", "prompt", Endpoint::kCompletion},
      {R"({"prompt":[]})", "prompt", Endpoint::kCompletion},
      {R"({"prompt":5})", "prompt", Endpoint::kCompletion},
      {R"({"prompt":["a",1]})", "prompt", Endpoint::kCompletion},
      {R"({"prompt":[1,100]})", "prompt", Endpoint::kCompletion},
      {R"({"prompt":[1,-1]})", "prompt", Endpoint::kCompletion},
      {R"({"prompt":[[1],[]]})", "prompt[1]", Endpoint::kCompletion},
      {R"({"prompt":"x","logprobs":true})", "logprobs", Endpoint::kCompletion},
      {R"({"prompt":"x","logprobs":30})", "logprobs", Endpoint::kCompletion},
      {R"({"prompt":"x","max_tokens":-1})", "max_tokens", Endpoint::kCompletion},
      {R"({"prompt":"x","prompt_logprobs":21})", "prompt_logprobs", Endpoint::kCompletion},
      {R"({"prompt":"x","prompt_logprobs":-1})", "prompt_logprobs", Endpoint::kCompletion},
      {R"({"messages":[{"role":"user","content":"hi"}],"prompt_logprobs":99})", "prompt_logprobs"},
      {R"({"prompt":"x","suffix":"y"})", "suffix", Endpoint::kCompletion},
  };
  for (const auto& c : cases) {
    ApiError e = bad(c.body, c.endpoint);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.type, "invalid_request_error") << c.body;
    EXPECT_EQ(e.param, c.param) << c.body << " -> " << e.message;
    EXPECT_FALSE(e.message.empty()) << c.body;
    if (*c.param) {
      EXPECT_NE(e.message.find(c.param), std::string::npos) << e.message;
    }
  }
}

TEST(OpenAiRequest, MalformedJsonSaysWhere) {
  ApiError e = bad(R"({"messages": [)");
  EXPECT_NE(e.message.find("not valid JSON"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("column"), std::string::npos) << e.message;
}

TEST(OpenAiRequest, RangeMessageSaysTheLimit) {
  ApiError e = bad(chat(R"("n":9)"));
  EXPECT_NE(e.message.find("between 1 and 4"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("9"), std::string::npos) << e.message;
}

TEST(OpenAiRequest, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  ApiError e = bad(deep);
  EXPECT_EQ(e.status, 400);
  std::string closed = std::string(20000, '[') + std::string(20000, ']');
  EXPECT_EQ(bad(closed).status, 400);  // valid JSON, but not an object
}

TEST(FitToContext, ExplicitMaxTokensOverTheContextNamesBothNumbers) {
  SamplingParams p;
  p.max_tokens = 100;
  auto e = fit_to_context(Endpoint::kChat, 950, 1000, true, &p);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->status, 400);
  EXPECT_EQ(e->code, "context_length_exceeded");
  EXPECT_EQ(e->param, "max_tokens");
  EXPECT_NE(e->message.find("1000"), std::string::npos) << e->message;
  EXPECT_NE(e->message.find("950"), std::string::npos) << e->message;
  EXPECT_NE(e->message.find("100"), std::string::npos) << e->message;
}

TEST(FitToContext, DefaultMaxTokensIsCutToWhatIsLeft) {
  SamplingParams p;
  p.max_tokens = std::numeric_limits<int32_t>::max();
  EXPECT_FALSE(fit_to_context(Endpoint::kChat, 900, 1000, false, &p).has_value());
  EXPECT_EQ(p.max_tokens, 100);
  p.max_tokens = 16;
  EXPECT_FALSE(fit_to_context(Endpoint::kCompletion, 10, 1000, false, &p).has_value());
  EXPECT_EQ(p.max_tokens, 16);
  EXPECT_FALSE(fit_to_context(Endpoint::kChat, 984, 1000, true, &p).has_value());  // exactly fits
  EXPECT_EQ(p.max_tokens, 16);
}

TEST(FitToContext, PromptThatFillsTheContextIsAnError) {
  SamplingParams p;
  auto e = fit_to_context(Endpoint::kCompletion, 1000, 1000, false, &p);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->param, "prompt");
  EXPECT_NE(e->message.find("1000"), std::string::npos);
}

TEST(FitToContext, MinTokensBeyondTheRoomLeftIsAnError) {
  SamplingParams p;
  p.max_tokens = std::numeric_limits<int32_t>::max();
  p.min_tokens = 50;
  auto e = fit_to_context(Endpoint::kChat, 980, 1000, false, &p);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->param, "min_tokens");
}

TEST(TokenizeRequest, PromptOrMessages) {
  auto a = parse_tokenize_request(R"({"prompt":"hi"})");
  ASSERT_TRUE(std::holds_alternative<TokenizeRequest>(a));
  EXPECT_EQ(std::get<TokenizeRequest>(a).prompt, "hi");
  auto b = parse_tokenize_request(R"({"messages":[{"role":"user","content":"x"}],
                                      "add_generation_prompt":false})");
  ASSERT_TRUE(std::holds_alternative<TokenizeRequest>(b));
  EXPECT_TRUE(std::get<TokenizeRequest>(b).is_chat);
  EXPECT_FALSE(std::get<TokenizeRequest>(b).chat.add_generation_prompt);
  auto c = parse_tokenize_request(R"({"messages":[{"role":"user","content":"x"}],
                                      "chat_template_kwargs":{"enable_thinking":false}})");
  ASSERT_TRUE(std::holds_alternative<TokenizeRequest>(c));
  EXPECT_EQ(std::get<TokenizeRequest>(c).chat.chat_template_kwargs.dump(),
            R"({"enable_thinking":false})");
  EXPECT_TRUE(std::holds_alternative<ApiError>(parse_tokenize_request(
      R"({"messages":[{"role":"user","content":"x"}],"chat_template_kwargs":true})")));
  EXPECT_TRUE(std::holds_alternative<ApiError>(parse_tokenize_request(R"({})")));
  EXPECT_TRUE(std::holds_alternative<ApiError>(parse_tokenize_request(R"({"prompt":3})")));
}

TEST(DetokenizeRequest, TokensInTheVocabulary) {
  auto a = parse_detokenize_request(R"({"tokens":[1,2]})", 10);
  ASSERT_TRUE(std::holds_alternative<DetokenizeRequest>(a));
  EXPECT_EQ(std::get<DetokenizeRequest>(a).tokens, (std::vector<int32_t>{1, 2}));
  auto b = parse_detokenize_request(R"({"tokens":[10]})", 10);
  ASSERT_TRUE(std::holds_alternative<ApiError>(b));
  EXPECT_EQ(std::get<ApiError>(b).param, "tokens");
  EXPECT_TRUE(std::holds_alternative<ApiError>(parse_detokenize_request(R"({"tokens":"1"})", 10)));
}

// Issue #39: priority and the two deadlines; a body's deadline is capped by the server's.
TEST(OpenAiRequest, SchedulingFieldsAndTheirServerCaps) {
  OpenAiRequest plain = ok(chat(""));
  EXPECT_EQ(plain.scheduling.priority, 0);
  EXPECT_FALSE(plain.scheduling.queue_seconds);
  EXPECT_FALSE(plain.scheduling.total_seconds);

  OpenAiRequest r = ok(chat(R"("priority":-7,"max_queue_seconds":2.5,"max_request_seconds":30)"));
  EXPECT_EQ(r.scheduling.priority, -7);
  EXPECT_DOUBLE_EQ(*r.scheduling.queue_seconds, 2.5);
  EXPECT_DOUBLE_EQ(*r.scheduling.total_seconds, 30);

  RequestLimits l = limits();
  l.max_queue_seconds = 1;
  l.max_request_seconds = 60;
  auto capped = std::get<OpenAiRequest>(parse_openai_request(
      chat(R"("max_queue_seconds":5,"max_request_seconds":10)"), Endpoint::kChat, l));
  EXPECT_DOUBLE_EQ(*capped.scheduling.queue_seconds, 1);   // the server's is lower
  EXPECT_DOUBLE_EQ(*capped.scheduling.total_seconds, 10);  // the body's is lower
  auto defaulted = std::get<OpenAiRequest>(parse_openai_request(chat(""), Endpoint::kChat, l));
  EXPECT_DOUBLE_EQ(*defaulted.scheduling.queue_seconds, 1);
  EXPECT_DOUBLE_EQ(*defaulted.scheduling.total_seconds, 60);

  EXPECT_EQ(ok(chat(R"("priority":null,"max_queue_seconds":null)")).scheduling.priority, 0);
  for (const char* body : {R"("priority":"1")", R"("priority":0.5)", R"("priority":3000000000)"}) {
    EXPECT_EQ(bad(chat(body)).param, "priority") << body;
  }
  for (const char* body : {R"("max_queue_seconds":0)", R"("max_queue_seconds":-1)",
                           R"("max_queue_seconds":"5")", R"("max_queue_seconds":1e300)"}) {
    EXPECT_EQ(bad(chat(body)).param, "max_queue_seconds") << body;
  }
  EXPECT_EQ(bad(chat(R"("max_request_seconds":[1])")).param, "max_request_seconds");
}

}  // namespace
}  // namespace ps
