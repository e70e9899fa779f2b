#pragma once
// The learned predictions between learned_prepare and learned_finish (the models run outside the core,
// asynchronously): open sessions by id, at most kMaxLearnedSessions at a time.
#include <cstdint>
#include <map>
#include <memory>

#include "prenet/api.hpp"
#include "prenet/learned.hpp"
#include "response/prepared.hpp"

namespace prenet {

/// One prepared learned prediction: the request and the feature rows its models must time.
struct LearnedSession {
  Prepared prepared;
  LearnedBatch batch;
};

/// The open sessions of the process (the core's callers run on one thread: wasm, the tests, the fuzzers).
class LearnedSessions {
 public:
  /// Opens `session` under a new id; throws InputError naming "request" when kMaxLearnedSessions are open.
  std::uint32_t open(LearnedSession session);
  /// The open session `id`; nullptr when it is unknown, finished or released.
  const LearnedSession* find(std::uint32_t id) const;
  /// Removes session `id` and hands it over; throws InputError naming "request" when it is not open.
  std::unique_ptr<LearnedSession> take(std::uint32_t id);
  /// Removes session `id` if it is open.
  void release(std::uint32_t id);

 private:
  std::map<std::uint32_t, std::unique_ptr<LearnedSession>> open_;
  std::uint32_t last_id_ = 0;
};

/// The process's sessions.
LearnedSessions& learned_sessions();

}  // namespace prenet
