#include "api/learned_sessions.hpp"

#include <string>
#include <utility>

#include "prenet/error.hpp"

namespace prenet {

std::uint32_t LearnedSessions::open(LearnedSession session) {
  if (open_.size() >= kMaxLearnedSessions) {
    throw InputError("request", std::to_string(kMaxLearnedSessions) +
                                    " learned predictions are already open; finish or release one first");
  }
  // Ids are not reused while open; 0 is never an id, so a caller's unset id is always unknown.
  do {
    ++last_id_;
  } while (last_id_ == 0 || open_.count(last_id_) > 0);
  open_.emplace(last_id_, std::make_unique<LearnedSession>(std::move(session)));
  return last_id_;
}

const LearnedSession* LearnedSessions::find(std::uint32_t id) const {
  auto it = open_.find(id);
  return it == open_.end() ? nullptr : it->second.get();
}

std::unique_ptr<LearnedSession> LearnedSessions::take(std::uint32_t id) {
  auto it = open_.find(id);
  if (it == open_.end()) {
    throw InputError("request", "learned session " + std::to_string(id) +
                                    " is not open (never prepared, already finished or released)");
  }
  std::unique_ptr<LearnedSession> s = std::move(it->second);
  open_.erase(it);
  return s;
}

void LearnedSessions::release(std::uint32_t id) { open_.erase(id); }

LearnedSessions& learned_sessions() {
  static LearnedSessions sessions;
  return sessions;
}

}  // namespace prenet
