// Dataset readers (analysis/training/datasets.hpp): IDX files written here (plain and gzip) read back
// value by value, the installed Fashion-MNIST and heart_scale against published facts about
// them, every LIBSVM and CSV error with its line number and token, split and normalisation.
#include <doctest/doctest.h>

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analysis/training/datasets.hpp"

using namespace fpemu;
using namespace fpemu::training;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temporary directory, removed with everything in it.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::random_device rd;
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path = fs::temp_directory_path() / ("fpemu_datasets_" + std::to_string(stamp) + "_" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
};

using bytes = std::vector<unsigned char>;

void put32(bytes& b, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<unsigned char>(v >> shift));
}

bytes idx_images(std::uint32_t magic, std::uint32_t n, std::uint32_t r, std::uint32_t c, const bytes& pixels) {
  bytes b;
  put32(b, magic);
  put32(b, n);
  put32(b, r);
  put32(b, c);
  b.insert(b.end(), pixels.begin(), pixels.end());
  return b;
}

bytes idx_labels(std::uint32_t magic, std::uint32_t n, const bytes& labels) {
  bytes b;
  put32(b, magic);
  put32(b, n);
  b.insert(b.end(), labels.begin(), labels.end());
  return b;
}

void write_plain(const std::string& path, const bytes& b) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  REQUIRE(out.good());
}

void write_gz(const std::string& path, const bytes& b) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  if (!b.empty()) REQUIRE(gzwrite(f, b.data(), static_cast<unsigned>(b.size())) == static_cast<int>(b.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

std::string error_of(const expected<dataset>& r) {
  REQUIRE_MESSAGE(!r.has_value(), "expected an error");
  return r.message();
}

dataset value_of(const expected<dataset>& r) {
  REQUIRE_MESSAGE(r.has_value(), r.message());
  return r.value();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The arguments are evaluated once, before the check: doctest evaluates a message lazily, while
// logging, and an assertion inside error_of() would then deadlock its reporter.
#define CHECK_CONTAINS(msg, part)                                                                    \
  do {                                                                                               \
    const std::string contains_msg_ = (msg), contains_part_ = (part);                                \
    CHECK_MESSAGE(contains(contains_msg_, contains_part_), "message: " << contains_msg_ << "\nlacks: " << contains_part_); \
  } while (false)

// Three 2x3 images whose pixels cover 0, 255 and values in between, and labels including 255:
// read_idx stores whatever class index it finds.
const bytes kPixels = {0, 1, 2, 127, 128, 255, 255, 254, 3, 50, 100, 200, 17, 0, 0, 255, 34, 99};
const bytes kLabels = {7, 0, 255};

void check_small_idx(const dataset& d) {
  REQUIRE(d.rows == 3);
  REQUIRE(d.cols == 6);
  REQUIRE(d.x.size() == kPixels.size());
  REQUIRE(d.y.size() == kLabels.size());
  for (std::size_t i = 0; i < kPixels.size(); ++i) CHECK(d.x[i] == static_cast<float>(kPixels[i]) / 255.0f);
  for (std::size_t i = 0; i < kLabels.size(); ++i) CHECK(d.y[i] == static_cast<float>(kLabels[i]));
  CHECK(d.x[0] == 0.0f);
  CHECK(d.x[5] == 1.0f);
}

// Sets an environment variable for one scope and restores its previous state.
struct scoped_env {
  std::string name;
  bool had = false;
  std::string old;
  scoped_env(const std::string& n, const std::string& v) : name(n) {
    if (const char* o = std::getenv(n.c_str())) had = true, old = o;
    setenv(n.c_str(), v.c_str(), 1);
  }
  ~scoped_env() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
};

}  // namespace

TEST_CASE("IDX: plain and gzip files read back value by value") {
  temp_dir t;
  const bytes images = idx_images(0x803, 3, 2, 3, kPixels), labels = idx_labels(0x801, 3, kLabels);
  write_plain(t.file("img"), images);
  write_plain(t.file("lab"), labels);
  write_gz(t.file("img.gz"), images);
  write_gz(t.file("lab.gz"), labels);

  const dataset plain = value_of(read_idx(t.file("img"), t.file("lab")));
  check_small_idx(plain);
  CHECK_CONTAINS(plain.source, t.file("img"));
  CHECK_CONTAINS(plain.source, t.file("lab"));
  check_small_idx(value_of(read_idx(t.file("img.gz"), t.file("lab.gz"))));
  check_small_idx(value_of(read_idx(t.file("img.gz"), t.file("lab"))));  // mixed is fine

  // Zero images is a valid (empty) file.
  write_plain(t.file("img0"), idx_images(0x803, 0, 28, 28, {}));
  write_plain(t.file("lab0"), idx_labels(0x801, 0, {}));
  const dataset empty = value_of(read_idx(t.file("img0"), t.file("lab0")));
  CHECK(empty.rows == 0);
  CHECK(empty.cols == 784);
  CHECK(empty.x.empty());
}

TEST_CASE("IDX: errors name the file and give the numbers found and expected") {
  temp_dir t;
  write_plain(t.file("img"), idx_images(0x803, 3, 2, 3, kPixels));
  write_plain(t.file("lab"), idx_labels(0x801, 3, kLabels));

  SUBCASE("missing files") {
    std::string m = error_of(read_idx(t.file("nope"), t.file("lab")));
    CHECK_CONTAINS(m, t.file("nope"));
    m = error_of(read_idx(t.file("img"), t.file("nolabels")));
    CHECK_CONTAINS(m, t.file("nolabels"));
    m = error_of(read_idx(t.path.string(), t.file("lab")));  // a directory
    CHECK_CONTAINS(m, t.path.string());
  }
  SUBCASE("bad magic") {
    std::string m = error_of(read_idx(t.file("lab"), t.file("lab")));  // labels given as images
    CHECK_CONTAINS(m, t.file("lab"));
    CHECK_CONTAINS(m, "0x00000801");
    CHECK_CONTAINS(m, "0x00000803");
    m = error_of(read_idx(t.file("img"), t.file("img")));
    CHECK_CONTAINS(m, "bad magic 0x00000803, expected 0x00000801");
    write_gz(t.file("magic.gz"), idx_images(0x12345678, 3, 2, 3, kPixels));
    m = error_of(read_idx(t.file("magic.gz"), t.file("lab")));
    CHECK_CONTAINS(m, "bad magic 0x12345678, expected 0x00000803");
    CHECK_CONTAINS(m, t.file("magic.gz"));
  }
  SUBCASE("truncated data and header") {
    // 3 x 2 x 3 images need 18 bytes; give 10.
    write_gz(t.file("short.gz"), idx_images(0x803, 3, 2, 3, bytes(kPixels.begin(), kPixels.begin() + 10)));
    std::string m = error_of(read_idx(t.file("short.gz"), t.file("lab")));
    CHECK_CONTAINS(m, t.file("short.gz"));
    CHECK_CONTAINS(m, "truncated");
    CHECK_CONTAINS(m, "need 18 bytes");
    CHECK_CONTAINS(m, "found 10");
    write_plain(t.file("shortlab"), idx_labels(0x801, 3, {7, 0}));
    m = error_of(read_idx(t.file("img"), t.file("shortlab")));
    CHECK_CONTAINS(m, "need 3 bytes of data, found 2");
    // The header of an image file is 16 bytes; give 4 + 3.
    write_plain(t.file("hdr"), {0, 0, 8, 3, 0, 0, 0});
    m = error_of(read_idx(t.file("hdr"), t.file("lab")));
    CHECK_CONTAINS(m, "needs 16 bytes, found 7");
    write_plain(t.file("tiny"), {0, 0});
    m = error_of(read_idx(t.file("tiny"), t.file("lab")));
    CHECK_CONTAINS(m, "found 2");
    // A product of dimensions beyond 64 bits is reported as truncation, not overflowed.
    write_plain(t.file("huge"), idx_images(0x803, 0xffffffffu, 0xffffffffu, 0xffffffffu, kPixels));
    m = error_of(read_idx(t.file("huge"), t.file("lab")));
    CHECK_CONTAINS(m, "truncated");
  }
  SUBCASE("bytes after the data") {
    bytes extra = kPixels;
    extra.push_back(9);
    extra.push_back(9);
    write_plain(t.file("long"), idx_images(0x803, 3, 2, 3, extra));
    const std::string m = error_of(read_idx(t.file("long"), t.file("lab")));
    CHECK_CONTAINS(m, "2 unexpected bytes");
  }
  SUBCASE("a gzip stream cut short") {
    write_gz(t.file("full.gz"), idx_images(0x803, 3, 2, 3, kPixels));
    std::ifstream in(t.file("full.gz"), std::ios::binary);
    bytes gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(gz.size() > 20);
    gz.erase(gz.end() - 12, gz.end());  // loses the trailer and part of the deflate stream
    write_plain(t.file("cut.gz"), gz);
    const std::string m = error_of(read_idx(t.file("cut.gz"), t.file("lab")));
    CHECK_CONTAINS(m, t.file("cut.gz"));
  }
  SUBCASE("image and label counts differ") {
    write_plain(t.file("lab2"), idx_labels(0x801, 2, {1, 2}));
    const std::string m = error_of(read_idx(t.file("img"), t.file("lab2")));
    CHECK_CONTAINS(m, "has 3 images");
    CHECK_CONTAINS(m, "has 2 labels");
  }
}

TEST_CASE("Fashion-MNIST: the directory from the environment, and the missing-file message") {
  temp_dir t;
  write_gz(t.file("train-images-idx3-ubyte.gz"), idx_images(0x803, 3, 2, 3, kPixels));
  write_gz(t.file("train-labels-idx1-ubyte.gz"), idx_labels(0x801, 3, kLabels));
  {
    const scoped_env env("FPEMU_FASHION_MNIST_DIR", t.path.string());
    CHECK(default_fashion_mnist_dir() == t.path.string());
    check_small_idx(value_of(read_fashion_mnist(default_fashion_mnist_dir(), true)));
    const std::string m = error_of(read_fashion_mnist(default_fashion_mnist_dir(), false));
    CHECK_CONTAINS(m, (t.path / "t10k-images-idx3-ubyte.gz").string());
    CHECK_CONTAINS(m, "dataset-fashion-mnist");
  }
  {
    const scoped_env env("FPEMU_FASHION_MNIST_DIR", "");
    CHECK(default_fashion_mnist_dir() == "/usr/share/datasets/fashion-mnist");
  }
  fs::remove(t.file("train-labels-idx1-ubyte.gz"));
  const std::string m = error_of(read_fashion_mnist(t.path.string(), true));
  CHECK_CONTAINS(m, "train-labels-idx1-ubyte.gz");
  CHECK_CONTAINS(m, "dataset-fashion-mnist");
}

// Published facts (Xiao, Rasul, Vollgraf 2017): 60000 training and 10000 test images of 28x28
// pixels in 10 balanced classes.
TEST_CASE("Fashion-MNIST as installed by Debian's dataset-fashion-mnist") {
  const std::string dir = default_fashion_mnist_dir();
  for (const bool train : {true, false}) {
    CAPTURE(train);
    const auto start = std::chrono::steady_clock::now();
    const dataset d = value_of(read_fashion_mnist(dir, train));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("read Fashion-MNIST " << std::string(train ? "train" : "test") << " in " << seconds << " s");
    const int n = train ? 60000 : 10000;
    CHECK(d.rows == n);
    CHECK(d.cols == 784);
    REQUIRE(d.x.size() == static_cast<std::size_t>(n) * 784);
    REQUIRE(d.y.size() == static_cast<std::size_t>(n));
    std::map<float, int> per_class;
    for (const float y : d.y) ++per_class[y];
    REQUIRE(per_class.size() == 10);
    for (int c = 0; c < 10; ++c) CHECK(per_class[static_cast<float>(c)] == n / 10);
    bool in_range = true;
    std::size_t zeros = 0, ones = 0;
    for (const float v : d.x) {
      in_range = in_range && v >= 0.0f && v <= 1.0f;
      zeros += v == 0.0f;
      ones += v == 1.0f;
    }
    CHECK(in_range);
    CHECK(zeros > 0);
    CHECK(ones > 0);
  }
}

// heart_scale is the Statlog (Heart) data set scaled to [-1, 1]: 270 patients, 13 attributes,
// 150 without and 120 with heart disease (UCI); LIBSVM writes absence as -1. Row 0 is the first
// line of the file: "+1 1:0.708333 2:1 3:1 4:-0.320755 5:-0.105023 6:-1 7:1 8:-0.419847 9:-1
// 10:-0.225806 12:1 13:-1".
TEST_CASE("heart_scale as installed by Debian's liblinear-tools") {
  const dataset d = value_of(read_libsvm(default_heart_scale_path()));
  CHECK(d.rows == 270);
  CHECK(d.cols == 13);
  REQUIRE(d.x.size() == 270u * 13u);
  REQUIRE(d.y.size() == 270u);
  const int negative = static_cast<int>(std::count(d.y.begin(), d.y.end(), -1.0f));
  const int positive = static_cast<int>(std::count(d.y.begin(), d.y.end(), 1.0f));
  CHECK(negative == 150);
  CHECK(positive == 120);
  CHECK(std::all_of(d.x.begin(), d.x.end(), [](float v) { return v >= -1.0f && v <= 1.0f; }));
  const std::vector<float> row0 = {0.708333f, 1, 1, -0.320755f, -0.105023f, -1, 1, -0.419847f, -1, -0.225806f, 0, 1, -1};
  CHECK(d.y[0] == 1.0f);
  CHECK(std::equal(row0.begin(), row0.end(), d.x.begin()));

  const float pm1[] = {-1, 1}, zero_one[] = {0, 1};
  CHECK_FALSE(check_labels(d, pm1, "logistic regression").has_value());
  const std::optional<std::string> bad = check_labels(d, zero_one, "a {0,1} loss");
  REQUIRE(bad.has_value());
  // The first -1 is on the second line of the file.
  CHECK_CONTAINS(*bad, "label -1 on line 2 ");
  CHECK_CONTAINS(*bad, "a {0,1} loss");
  CHECK_CONTAINS(*bad, "allowed: 0, 1");
  CHECK_CONTAINS(*bad, "heart_scale");
  dataset mapped = d;
  map_labels(mapped, -1, 0);
  CHECK_FALSE(check_labels(mapped, zero_one, "a {0,1} loss").has_value());
  CHECK(std::count(mapped.y.begin(), mapped.y.end(), 0.0f) == 150);

  temp_dir t;
  {
    const scoped_env env("FPEMU_HEART_SCALE", t.file("heart_scale"));
    CHECK(default_heart_scale_path() == t.file("heart_scale"));
    const std::string m = error_of(read_libsvm(default_heart_scale_path()));
    CHECK_CONTAINS(m, t.file("heart_scale"));
    CHECK_CONTAINS(m, "liblinear-tools");
  }
}

TEST_CASE("LIBSVM: sparse rows, comments, blank lines, min_cols") {
  temp_dir t;
  const std::string p = t.file("small.svm");
  write_text(p,
             "# a comment line\n"
             "+1 1:0.5 3:-2   # trailing comment\n"
             "\n"
             "-1\t2:1e-3 \r\n"
             "   \n"
             "0\n"
             "3.5 1:+4 2:1e-50");  // no final newline; 1e-50 underflows to 0
  const dataset d = value_of(read_libsvm(p));
  CHECK(d.rows == 4);
  CHECK(d.cols == 3);
  CHECK(d.y == std::vector<float>{1, -1, 0, 3.5f});
  CHECK(d.x == std::vector<float>{0.5f, 0, -2, 0, 1e-3f, 0, 0, 0, 0, 4, 0, 0});
  CHECK(d.source == p);
  const dataset wide = value_of(read_libsvm(p, 5));
  CHECK(wide.cols == 5);
  CHECK(wide.x == std::vector<float>{0.5f, 0, -2, 0, 0, 0, 1e-3f, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0});
  CHECK(value_of(read_libsvm(p, 2)).cols == 3);
}

TEST_CASE("LIBSVM: each error gives the line number and the token") {
  temp_dir t;
  const std::string p = t.file("bad.svm");
  // Two good lines, a blank line, a comment: the bad token is on line 5.
  const std::string good = "1 1:1 2:2\n-1 2:0.5\n\n# note\n";
  struct bad_case {
    std::string line, token, problem;
  };
  const bad_case cases[] = {
      {"1 1:0.5 2-0.3", "'2-0.3'", "expected index:value"},
      {"1 1:0.5 :3", "':3'", "malformed"},
      {"1 1:", "'1:'", "malformed"},
      {"1 x:1", "'x:1'", "not an integer"},
      {"1 1.5:1", "'1.5:1'", "not an integer"},
      {"1 0:1", "'0:1'", "index 0"},
      {"1 -2:1", "'-2:1'", "index -2"},
      {"1 99999999999:1", "'99999999999:1'", "too large"},
      {"1 3:1 2:1", "'2:1'", "strictly increasing"},
      {"1 3:1 3:2", "'3:2'", "strictly increasing"},
      {"1 1:abc", "'1:abc'", "not a number"},
      {"1 1:0x10", "'1:0x10'", "not a number"},
      {"1 1:nan", "'1:nan'", "not a finite"},
      {"1 1:-inf", "'1:-inf'", "not a finite"},
      {"1 1:1e39", "'1:1e39'", "not a finite"},
      {"abc 1:1", "'abc'", "label"},
      {"++1 1:1", "'++1'", "label"},
      {"nan 1:1", "'nan'", "label"},
      {"inf", "'inf'", "not a finite"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.line);
    write_text(p, good + c.line + "\n1 1:1\n");
    const std::string m = error_of(read_libsvm(p));
    CHECK_CONTAINS(m, p + ":5: ");
    CHECK_CONTAINS(m, c.token);
    CHECK_CONTAINS(m, c.problem);
  }

  write_text(p, "");
  CHECK_CONTAINS(error_of(read_libsvm(p)), p + ": no data rows");
  write_text(p, "# only a comment\n\n  \n");
  CHECK_CONTAINS(error_of(read_libsvm(p)), "no data rows");
  CHECK_CONTAINS(error_of(read_libsvm(t.file("absent.svm"))), t.file("absent.svm"));
  // An index that would make a dense matrix of more than 2^31 elements.
  write_text(p, "1 2000000000:1\n1 1:1\n");
  CHECK_CONTAINS(error_of(read_libsvm(p)), "line 1");
}

TEST_CASE("CSV: header detection, label column, blank lines") {
  temp_dir t;
  const std::string p = t.file("a.csv");
  write_text(p, "label, a ,b\r\n1,0.5,2\r\n\r\n0, -1 ,3e2\r\n");
  dataset d = value_of(read_csv(p));
  CHECK(d.rows == 2);
  CHECK(d.cols == 2);
  CHECK(d.y == std::vector<float>{1, 0});
  CHECK(d.x == std::vector<float>{0.5f, 2, -1, 300});

  // No header: every field of the first line is a number.
  write_text(p, "0.5,2,1\n-1,3,0\n");
  d = value_of(read_csv(p, -1));
  CHECK(d.rows == 2);
  CHECK(d.y == std::vector<float>{1, 0});
  CHECK(d.x == std::vector<float>{0.5f, 2, -1, 3});
  d = value_of(read_csv(p, 1));
  CHECK(d.y == std::vector<float>{2, 3});
  CHECK(d.x == std::vector<float>{0.5f, 1, -1, 0});
  d = value_of(read_csv(p));
  CHECK(d.y == std::vector<float>{0.5f, -1});
  CHECK(d.x == std::vector<float>{2, 1, 3, 0});

  // A single column: labels only.
  write_text(p, "y\n4\n5\n");
  d = value_of(read_csv(p, -1));
  CHECK(d.cols == 0);
  CHECK(d.y == std::vector<float>{4, 5});
  CHECK(d.x.empty());
}

TEST_CASE("CSV: each error gives the line number and the field") {
  temp_dir t;
  const std::string p = t.file("bad.csv");
  SUBCASE("ragged rows") {
    write_text(p, "y,a,b\n1,2,3\n\n1,2\n");
    std::string m = error_of(read_csv(p));
    CHECK_CONTAINS(m, p + ":4: ");
    CHECK_CONTAINS(m, "found 2 fields, expected 3");
    write_text(p, "1,2,3\n4,5,6,7\n");
    m = error_of(read_csv(p));
    CHECK_CONTAINS(m, p + ":2: ");
    CHECK_CONTAINS(m, "found 4 fields, expected 3");
  }
  SUBCASE("non-numeric and non-finite fields") {
    const std::pair<std::string, std::string> cases[] = {
        {"1,abc,2", "'abc'"}, {"1,,2", "''"},      {"1,2,nan", "'nan'"},
        {"inf,1,2", "'inf'"}, {"1,1e39,2", "'1e39'"}, {"1,\"2\",3", "'\"2\"'"},
    };
    for (const auto& c : cases) {  // no structured binding: clang cannot capture one in CAPTURE
      CAPTURE(c.first);
      write_text(p, "y,a,b\n1,2,3\n4,5,6\n" + c.first + "\n");
      const std::string m = error_of(read_csv(p));
      CHECK_CONTAINS(m, p + ":4: ");
      CHECK_CONTAINS(m, c.second);
    }
    // nan in the first line is a non-finite number, not a header.
    write_text(p, "1,nan,2\n");
    const std::string m = error_of(read_csv(p));
    CHECK_CONTAINS(m, p + ":1: ");
    CHECK_CONTAINS(m, "field 2 'nan' is not a finite");
  }
  SUBCASE("label_column out of range") {
    write_text(p, "\ny,a,b\n1,2,3\n");
    const std::string m = error_of(read_csv(p, 3));
    CHECK_CONTAINS(m, p + ":2: ");
    CHECK_CONTAINS(m, "label_column 3");
    CHECK_CONTAINS(m, "3 fields");
  }
  SUBCASE("empty files") {
    write_text(p, "");
    CHECK_CONTAINS(error_of(read_csv(p)), "no data rows");
    write_text(p, "\n \n");
    CHECK_CONTAINS(error_of(read_csv(p)), "no data rows");
    write_text(p, "y,a,b\n");
    CHECK_CONTAINS(error_of(read_csv(p)), "no data rows after the header");
    CHECK_CONTAINS(error_of(read_csv(t.file("absent.csv"))), t.file("absent.csv"));
  }
}

namespace {

// Row i is (i, -i, 0.5 i) with label i: any row's content tells which row it was.
dataset numbered(int n) {
  dataset d;
  d.rows = n;
  d.cols = 3;
  d.source = "numbered";
  for (int i = 0; i < n; ++i) {
    d.x.insert(d.x.end(), {static_cast<float>(i), static_cast<float>(-i), 0.5f * static_cast<float>(i)});
    d.y.push_back(static_cast<float>(i));
  }
  return d;
}

void check_rows_intact(const dataset& d) {
  REQUIRE(d.x.size() == static_cast<std::size_t>(d.rows) * 3);
  REQUIRE(d.y.size() == static_cast<std::size_t>(d.rows));
  for (std::size_t r = 0; r < d.y.size(); ++r) {
    const float i = d.y[r];
    CHECK(d.x[3 * r] == i);
    CHECK(d.x[3 * r + 1] == -i);
    CHECK(d.x[3 * r + 2] == 0.5f * i);
  }
}

}  // namespace

TEST_CASE("split: sizes, a permutation, deterministic in the seed") {
  const dataset d = numbered(100);
  const auto [train, test] = split(d, 0.25, 42);
  CHECK(train.rows == 75);
  CHECK(test.rows == 25);
  CHECK(train.cols == 3);
  CHECK(test.cols == 3);
  check_rows_intact(train);
  check_rows_intact(test);
  std::vector<float> all = train.y;
  all.insert(all.end(), test.y.begin(), test.y.end());
  std::vector<float> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == d.y);  // every row exactly once
  CHECK(all != d.y);     // and shuffled

  const auto [train2, test2] = split(d, 0.25, 42);
  CHECK(train2.y == train.y);
  CHECK(test2.y == test.y);
  CHECK(train2.x == train.x);
  const auto [train3, test3] = split(d, 0.25, 43);
  CHECK(train3.y != train.y);

  // Every seed gives a permutation; over many seeds every row lands in the test set sometimes.
  std::set<float> ever_tested;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const auto [a, b] = split(numbered(10), 0.3, seed);
    REQUIRE(a.rows == 7);
    REQUIRE(b.rows == 3);
    std::set<float> seen(a.y.begin(), a.y.end());
    seen.insert(b.y.begin(), b.y.end());
    CHECK(seen.size() == 10);
    ever_tested.insert(b.y.begin(), b.y.end());
  }
  CHECK(ever_tested.size() == 10);

  CHECK(split(d, 0.0, 1).first.rows == 100);
  CHECK(split(d, 0.0, 1).second.rows == 0);
  CHECK(split(d, 1.0, 1).second.rows == 100);
  CHECK(split(d, 1.5, 1).second.rows == 100);
  CHECK(split(d, -1.0, 1).second.rows == 0);
  CHECK(split(d, std::nan(""), 1).second.rows == 0);
  CHECK(split(numbered(1), 0.5, 7).first.rows + split(numbered(1), 0.5, 7).second.rows == 1);
  CHECK(split(numbered(0), 0.5, 7).first.rows == 0);
}

TEST_CASE("l2_normalise_rows") {
  dataset d;
  d.rows = 4;
  d.cols = 3;
  d.x = {3, 4, 0, 0, 0, 0, 0, -2, 0, 1, 1, 1};
  l2_normalise_rows(d);
  CHECK(d.x[0] == static_cast<float>(3.0 / 5.0));
  CHECK(d.x[1] == static_cast<float>(4.0 / 5.0));
  CHECK(d.x[2] == 0.0f);
  for (int c = 0; c < 3; ++c) CHECK(d.x[static_cast<std::size_t>(3 + c)] == 0.0f);  // zero row stays zero
  CHECK(d.x[6] == 0.0f);
  CHECK(d.x[7] == -1.0f);
  CHECK(d.x[8] == 0.0f);
  for (int c = 0; c < 3; ++c) CHECK(d.x[static_cast<std::size_t>(9 + c)] == static_cast<float>(1 / std::sqrt(3.0)));
  for (int r = 0; r < 4; ++r) {
    double s = 0;
    for (int c = 0; c < 3; ++c) s += static_cast<double>(d.x[static_cast<std::size_t>(3 * r + c)]) * d.x[static_cast<std::size_t>(3 * r + c)];
    CHECK(std::fabs(std::sqrt(s) - (r == 1 ? 0.0 : 1.0)) < 1e-7);
  }
}
