#pragma once

namespace ps {

// Which waiting sequence is admitted next and which running one is preempted first.
//   kFcfs:     arrival order; the newest running sequence is preempted first.
//   kPriority: (priority, arrival), lower priority values first (vLLM's convention); the
//              running sequence with the highest value (the newest among equals) is preempted
//              first, and a waiting sequence may preempt running ones of strictly lower
//              priority (higher value) for blocks or a seat. Strict: a steady stream of urgent
//              requests can hold back lower ones indefinitely; what bounds their wait is their
//              queue deadline (the engine's, engine/request.h).
enum class SchedulingPolicy { kFcfs, kPriority };

}  // namespace ps
