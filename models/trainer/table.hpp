#pragma once
// Reading the training tables (gzip-compressed CSV with a header row) with errors that name row and column.
#include <stdexcept>
#include <string>
#include <vector>

namespace trainer {

/// A problem with training data or trainer input; the message names the file, row and column.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Table {
 public:
  /// Reads `path` (.csv or .csv.gz). Throws DataError on unreadable files or ragged rows.
  static Table read(const std::string& path);
  /// Parses CSV text; `name` labels errors. Quoted fields with commas and doubled quotes are supported.
  static Table parse(const std::string& text, const std::string& name);

  std::size_t rows() const { return cells_.size(); }
  const std::vector<std::string>& columns() const { return columns_; }
  bool has(const std::string& column) const;
  /// The text of a cell; throws DataError naming the missing column.
  const std::string& text(std::size_t row, const std::string& column) const;
  /// A finite number; throws DataError naming row (1-based, header = row 1) and column otherwise.
  double number(std::size_t row, const std::string& column) const;
  /// A finite number > 0.
  double positive(std::size_t row, const std::string& column) const;
  /// The error message prefix for a cell: "file: row R, column C".
  std::string where(std::size_t row, const std::string& column) const;

 private:
  std::size_t index(const std::string& column) const;
  std::string name_;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> cells_;
};

}  // namespace trainer
