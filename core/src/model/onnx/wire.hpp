#pragma once
// The protobuf wire format, bounded: every varint and length is checked against the bytes left, nothing is
// copied (fields are views into the file), and a malformed file is an InputError naming the message read.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace prenet::onnx {

/// One protobuf field: its number, wire type and value (varint / fixed value, or a view of its bytes).
struct Field {
  std::uint64_t number = 0;
  int wire = 0;
  std::uint64_t value = 0;
  std::string_view bytes;
};

/// Reads the fields of one message. Every length is checked against the bytes left; nothing is copied.
class Wire {
 public:
  Wire(std::string_view data, const std::string& path, const char* what) : data_(data), path_(path), what_(what) {}

  /// Reads the next field into `f`; false at the end of the message.
  bool next(Field& f);

  /// Throws the InputError for a malformed `what` message under `path`.
  [[noreturn]] void fail(const std::string& why) const;

 private:
  std::uint64_t varint();
  std::uint64_t fixed(std::size_t n);

  std::string_view data_;
  std::size_t pos_ = 0;
  const std::string& path_;
  const char* what_;
};

/// Appends the integers of a repeated int field, packed (wire 2) or not (wire 0), keeping at most `limit`.
bool read_ints(const Field& f, std::vector<std::int64_t>& out, std::size_t limit, const std::string& path,
               const char* what);

}  // namespace prenet::onnx
