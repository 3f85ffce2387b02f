#include "api/streamed_reply.h"

#include <httplib.h>

namespace ps {

StreamedReply::StreamedReply(std::shared_ptr<const ServingContext> ctx, Prepared prepared,
                             ChoiceStreams streams, ConnectionWatch watch)
    : ctx_(std::move(ctx)),
      p_(std::move(prepared)),
      streams_(std::move(streams)),
      watch_(watch),
      splitter_(p_, streams_.size()) {
  tally_.prompts(p_.prompt_tokens);
  deadline_ = deadline_of(*ctx_);
}

bool StreamedReply::pump(httplib::DataSink& sink) {
  if (watch_.peer_gone()) return false;  // httplib closes; our destructor cancels
  std::string out;
  bool done = false;
  if (!opened_) {
    opened_ = true;
    out = opening();
  } else {
    size_t i = 0;
    RequestOutput ev;
    // Several events per write when they are ready together (n > 1, a burst after a stall).
    for (int k = 0; k < 64 && streams_.next(&i, &ev, k == 0 ? kPoll : std::chrono::milliseconds(0));
         ++k) {
      tally_.add(i, p_.n, ev);
      on_event(i, ev, &out);
    }
    if (!streams_.all_finished() && std::chrono::steady_clock::now() >= deadline_) {
      // The reply (and so its streams) is destroyed once the response ends: that cancels them.
      out += on_timeout(timed_out(*ctx_));
      done = true;
    } else if (streams_.all_finished()) {
      out += on_all_finished();
      done = true;
    }
  }
  // An empty write would tell httplib the stream ended; only write when there is data.
  if (!out.empty() && !sink.write(out.data(), out.size())) return false;
  if (done) sink.done();
  return true;
}

void respond_streamed(std::shared_ptr<StreamedReply> reply, httplib::Response& res) {
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [reply](size_t /*offset*/, httplib::DataSink& sink) { return reply->pump(sink); });
}

}  // namespace ps
