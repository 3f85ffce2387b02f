#pragma once
// What every SSE route's stream shares: the engine streams behind it, the loop httplib calls
// (look at the connection, take the events ready now, end on timeout or when every choice has
// finished) and the response's headers. A route supplies only what its stream says: its opening,
// each event, its end and its timeout (OpenAI chunks and [DONE]; Messages' named events).
#include <chrono>
#include <memory>
#include <string>

#include "api/generation.h"

namespace httplib {
struct DataSink;
struct Response;
}  // namespace httplib

namespace ps {

class StreamedReply {
 public:
  StreamedReply(std::shared_ptr<const ServingContext> ctx, Prepared prepared, ChoiceStreams streams,
                ConnectionWatch watch);
  virtual ~StreamedReply() = default;

  // One write of the response; false when the client has gone or a write failed (httplib then
  // closes, and destroying this cancels what is unfinished).
  bool pump(httplib::DataSink& sink);

 protected:
  // The text written before any event, at once, so a client sees the response start.
  virtual std::string opening() = 0;
  // One event of choice i (tally already counts it); its text is appended to `out`.
  virtual void on_event(size_t i, RequestOutput& ev, std::string* out) = 0;
  virtual std::string on_all_finished() = 0;
  virtual std::string on_timeout(const ApiError& error) = 0;

  std::shared_ptr<const ServingContext> ctx_;
  Prepared p_;
  ChoiceStreams streams_;
  ConnectionWatch watch_;
  ReplySplitter splitter_;
  UsageTally tally_;

 private:
  bool opened_ = false;
  std::chrono::steady_clock::time_point deadline_;
};

// Answers `res` with `reply` as a text/event-stream (no caching, no proxy buffering).
void respond_streamed(std::shared_ptr<StreamedReply> reply, httplib::Response& res);

}  // namespace ps
