#include "model/onnx/wire.hpp"

#include "prenet/error.hpp"

namespace prenet::onnx {

bool Wire::next(Field& f) {
  if (pos_ >= data_.size()) return false;
  std::uint64_t tag = varint();
  f.number = tag >> 3;
  f.wire = static_cast<int>(tag & 7);
  if (f.number == 0) fail("field number 0");
  switch (f.wire) {
    case 0: f.value = varint(); break;
    case 1: f.value = fixed(8); break;
    case 5: f.value = fixed(4); break;
    case 2: {
      std::uint64_t len = varint();
      if (len > data_.size() - pos_) fail("a length of " + std::to_string(len) + " runs past the end of the data");
      f.bytes = data_.substr(pos_, static_cast<std::size_t>(len));
      pos_ += static_cast<std::size_t>(len);
      break;
    }
    default: fail("unsupported wire type " + std::to_string(f.wire));
  }
  return true;
}

void Wire::fail(const std::string& why) const {
  throw InputError(path_, "malformed ONNX file (" + std::string(what_) + "): " + why);
}

/// A base-128 varint of at most 10 bytes.
std::uint64_t Wire::varint() {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size()) fail("truncated varint");
    auto byte = static_cast<std::uint8_t>(data_[pos_++]);
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
  }
  fail("varint longer than 10 bytes");
}

/// A little-endian fixed-size value of `n` bytes.
std::uint64_t Wire::fixed(std::size_t n) {
  if (n > data_.size() - pos_) fail("truncated fixed-size value");
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i)
    v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(data_[pos_ + i])) << (8 * i);
  pos_ += n;
  return v;
}

bool read_ints(const Field& f, std::vector<std::int64_t>& out, std::size_t limit, const std::string& path,
               const char* what) {
  if (f.wire == 0) {
    if (out.size() >= limit) return false;
    out.push_back(static_cast<std::int64_t>(f.value));
    return true;
  }
  if (f.wire != 2) Wire(f.bytes, path, what).fail("integer list with wire type " + std::to_string(f.wire));
  std::size_t pos = 0;
  while (pos < f.bytes.size()) {
    std::uint64_t v = 0;
    int shift = 0;
    for (;; shift += 7) {
      if (shift >= 64 || pos >= f.bytes.size()) Wire(f.bytes, path, what).fail("bad packed varint");
      auto byte = static_cast<std::uint8_t>(f.bytes[pos++]);
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
    }
    if (out.size() >= limit) return false;
    out.push_back(static_cast<std::int64_t>(v));
  }
  return true;
}

}  // namespace prenet::onnx
