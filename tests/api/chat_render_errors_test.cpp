// Template failures at request time are the client's 400s, with the template's own message.
#include <gtest/gtest.h>

#include "chat/chat_renderer.h"
#include "openai/chat_messages.h"

namespace {

using nlohmann::ordered_json;
using ps::ApiError;
using ps::chat::ChatRenderer;

ps::chat::ChatPromptRequest user_turn(const char* role) {
  ps::chat::ChatPromptRequest r;
  r.messages = ordered_json::array({{{"role", role}, {"content", "x"}}});
  return r;
}

TEST(ChatRenderErrors, RaiseExceptionIsA400WithItsMessage) {
  ChatRenderer r = ChatRenderer::from_templates(
      {{"default",
        "{% if messages[0].role != 'user' %}\n{{ raise_exception('Conversation roles "
        "must alternate user/assistant') }}{% endif %}ok"}},
      "strict.jinja", {});
  auto ok = ps::render_prompt(r, user_turn("user"));
  ASSERT_TRUE(std::holds_alternative<std::string>(ok));
  EXPECT_EQ(std::get<std::string>(ok), "ok");
  auto bad = ps::render_prompt(r, user_turn("assistant"));
  ASSERT_TRUE(std::holds_alternative<ApiError>(bad));
  const ApiError& e = std::get<ApiError>(bad);
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "messages");
  EXPECT_NE(e.message.find("the chat template failed: "), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("Conversation roles must alternate user/assistant"), std::string::npos)
      << e.message;
}

TEST(ChatRenderErrors, UndefinedCallAndContinueWithoutTextAre400s) {
  ChatRenderer calls =
      ChatRenderer::from_templates({{"default", "{{ no_such_function() }}"}}, "calls", {});
  auto a = ps::render_prompt(calls, user_turn("user"));
  ASSERT_TRUE(std::holds_alternative<ApiError>(a));
  EXPECT_EQ(std::get<ApiError>(a).status, 400);
  EXPECT_NE(std::get<ApiError>(a).message.find("no_such_function"), std::string::npos)
      << std::get<ApiError>(a).message;

  // continue_final_message needs the final message's text in the rendering.
  ChatRenderer drops = ChatRenderer::from_templates({{"default", "nothing"}}, "drops", {});
  ps::chat::ChatPromptRequest cont = user_turn("assistant");
  cont.add_generation_prompt = false;
  cont.continue_final_message = true;
  auto b = ps::render_prompt(drops, cont);
  ASSERT_TRUE(std::holds_alternative<ApiError>(b));
  EXPECT_EQ(std::get<ApiError>(b).status, 400);
  EXPECT_NE(std::get<ApiError>(b).message.find("continue_final_message"), std::string::npos)
      << std::get<ApiError>(b).message;
}

}  // namespace
