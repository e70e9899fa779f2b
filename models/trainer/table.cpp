#include "trainer/table.hpp"

#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace trainer {
namespace {

std::string read_file(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");  // reads plain files too
  if (!file) throw DataError(path + ": cannot open");
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  bool failed = n < 0;
  gzclose(file);
  if (failed) throw DataError(path + ": corrupt gzip data");
  return text;
}

std::vector<std::string> split_line(const std::string& line, const std::string& name, std::size_t row) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) throw DataError(name + ": row " + std::to_string(row) + ": unterminated quote");
  fields.push_back(field);
  return fields;
}

}  // namespace

Table Table::read(const std::string& path) { return parse(read_file(path), path); }

Table Table::parse(const std::string& text, const std::string& name) {
  Table t;
  t.name_ = name;
  std::size_t start = 0, row = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++row;
    if (line.empty() || line == "\r") continue;
    auto fields = split_line(line, name, row);
    if (t.columns_.empty()) {
      t.columns_ = fields;
      continue;
    }
    if (fields.size() != t.columns_.size()) {
      throw DataError(name + ": row " + std::to_string(row) + ": expected " + std::to_string(t.columns_.size()) +
                      " fields, found " + std::to_string(fields.size()));
    }
    t.cells_.push_back(std::move(fields));
  }
  if (t.columns_.empty()) throw DataError(name + ": empty table (no header row)");
  return t;
}

bool Table::has(const std::string& column) const {
  for (const auto& c : columns_) {
    if (c == column) return true;
  }
  return false;
}

std::size_t Table::index(const std::string& column) const {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == column) return i;
  }
  throw DataError(name_ + ": missing column \"" + column + "\"");
}

std::string Table::where(std::size_t row, const std::string& column) const {
  return name_ + ": row " + std::to_string(row + 2) + ", column " + column;
}

const std::string& Table::text(std::size_t row, const std::string& column) const {
  return cells_.at(row).at(index(column));
}

double Table::number(std::size_t row, const std::string& column) const {
  const std::string& cell = text(row, column);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(cell.c_str(), &end);
  if (cell.empty() || end != cell.c_str() + cell.size() || errno == ERANGE || !std::isfinite(v)) {
    throw DataError(where(row, column) + ": expected a finite number, got \"" + cell + "\"");
  }
  return v;
}

double Table::positive(std::size_t row, const std::string& column) const {
  double v = number(row, column);
  if (v <= 0) throw DataError(where(row, column) + ": expected a positive number, got " + text(row, column));
  return v;
}

}  // namespace trainer
