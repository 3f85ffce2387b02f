#include "engine/request.h"

namespace ps {

const char* to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kAbort:
      return "abort";
    case FinishReason::kError:
      return "error";
    case FinishReason::kQueueTimeout:
      return "queue_timeout";
  }
  return "error";
}

}  // namespace ps
