// Dataset readers for the training experiments: small real data sets held densely as binary32.
//
// Formats:
//  IDX     (LeCun's MNIST format, also Fashion-MNIST) big-endian header, magic 0x00000803 with
//          dims n x rows x cols for images, 0x00000801 with dim n for labels, unsigned bytes.
//          Plain or gzip (zlib reads both). Pixels become p / 255.0f, labels the class index.
//  LIBSVM  "label idx:val idx:val ...", indices 1-based and strictly increasing; absent
//          features are 0; '#' starts a comment; blank lines are skipped.
//  CSV     comma-separated numbers, one row per line, an optional header line (taken as one
//          when some field of the first line is not a number); no quoting; blank lines skipped.
//
// Error policy: nothing is guessed or silently dropped. Any malformed input makes the whole read
// fail with a message naming the file, the 1-based line (text formats), the offending token and
// what was expected; IDX messages give the magic found and expected, or the bytes expected and
// found. Numbers must be finite binary32 values (nan, inf and overflow are errors), because a
// single non-finite input would otherwise poison every later step of a training run.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fpemu/expected.hpp"

namespace fpemu::training {

struct dataset {
  int rows = 0, cols = 0;
  std::vector<float> x;  // rows x cols, row-major
  std::vector<float> y;  // one label per row: the class index (IDX) or the label as written
  std::vector<int> lines;  // text formats: each row's 1-based line in the file (for messages)
  std::string source;    // file name(s), for messages
};

expected<dataset> read_idx(const std::string& images_path, const std::string& labels_path);

// {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz from dir.
expected<dataset> read_fashion_mnist(const std::string& dir, bool train);
// $FPEMU_FASHION_MNIST_DIR, else where Debian's dataset-fashion-mnist installs the files.
std::string default_fashion_mnist_dir();

// cols = max(largest index seen, min_cols): a test set may not mention the last feature.
expected<dataset> read_libsvm(const std::string& path, int min_cols = 0);
// $FPEMU_HEART_SCALE, else the copy in Debian's liblinear-tools.
std::string default_heart_scale_path();

// label_column < 0 means the last column; the other columns become x in their order.
expected<dataset> read_csv(const std::string& path, int label_column = 0);

// A message naming the first row (its line for text formats, else 0-based index) whose label is not in allowed, or nothing.
std::optional<std::string> check_labels(const dataset& d, std::span<const float> allowed, std::string_view task);
// Every label equal to from becomes to (e.g. -1 -> 0 for a {0,1} loss).
void map_labels(dataset& d, float from, float to);

// A Fisher-Yates shuffle keyed by seed (Philox, so the split depends on nothing but seed), then
// the last round(test_fraction * rows) rows of the permutation are the test set. test_fraction
// is clamped to [0, 1] (nan counts as 0). Returns {train, test}.
std::pair<dataset, dataset> split(const dataset& d, double test_fraction, std::uint64_t seed);

// Each row scaled to unit l2 norm (computed in double); all-zero rows stay zero.
void l2_normalise_rows(dataset& d);

}  // namespace fpemu::training
