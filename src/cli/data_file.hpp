// The user's data for sum, dot and gemm: vectors and matrices read from NumPy .npy files or plain
// text, in one place so that the commands accept exactly the same files and say the same things
// about bad ones.
//
// .npy (NumPy's format, "numpy.lib.format", versions 1.0, 2.0 and 3.0): the magic "\x93NUMPY",
// a major and a minor version byte, the header length (2 bytes little-endian in 1.0, 4 bytes in
// 2.0 and 3.0), then a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}
// padded with spaces and ended by '\n', then the data. Accepted: descr '<f4' or '<f8'
// (little-endian float32 or float64; '=' and '|' are not written by NumPy for these), C order
// (fortran_order False), shape (n,) for a vector and (rows, cols) for a matrix, no element
// missing or extra. Any file that starts with the magic is read as .npy.
//
// Plain text: numbers (decimal or C99 hex float, as strtod reads them) separated by blanks; a
// vector may spread them over any lines, a matrix has one row per line, every row of the same
// length. Blank lines and lines whose first non-blank character is '#' are skipped.
//
// Every value must be finite. Errors name the option, the file, and the field, line or element
// that is wrong, with what is accepted.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fpemu::cli {

struct data_array {
  std::size_t rows = 0, cols = 0;  // a vector: rows = 1, cols = its length
  std::vector<double> values;      // row-major; float32 files widen exactly
};

// A 1-D array (.npy shape (n,)) or a text file of numbers; at least one value.
data_array read_vector(const std::string& option, const std::string& path);
// A 2-D array (.npy shape (rows, cols)) or a text file of rows; at least one row and column.
data_array read_matrix(const std::string& option, const std::string& path);

}  // namespace fpemu::cli
