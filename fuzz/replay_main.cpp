// A plain main() for the fuzz harnesses, so that their kept inputs stay tests without clang or
// libFuzzer: it calls LLVMFuzzerTestOneInput once on every file named on the command line and on
// every regular file of a directory named there (in name order, not recursive), then prints how
// many inputs ran. A failed check traps inside the harness and kills the process, so the test
// fails, the input's name printed just before. Running nothing fails too: a replay of nothing
// proves nothing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path p(argv[i]);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry& e : fs::directory_iterator(p, ec))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (fs::is_regular_file(p, ec)) {
      inputs.push_back(p);
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  for (const fs::path& p : inputs) {
    // An exactly sized heap buffer, as libFuzzer passes, so that AddressSanitizer sees a read
    // past the end.
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(p, ec);
    const std::unique_ptr<std::uint8_t[]> data(new std::uint8_t[ec ? 0 : size]);
    std::ifstream in(p, std::ios::binary);
    if (ec || !in.read(reinterpret_cast<char*>(data.get()), static_cast<std::streamsize>(size))) {
      std::fprintf(stderr, "%s: read error\n", p.c_str());
      return 2;
    }
    std::printf("%s (%ju bytes)\n", p.c_str(), size);
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(data.get(), static_cast<std::size_t>(size));
  }
  std::printf("%zu inputs ran\n", inputs.size());
  return inputs.empty() ? 1 : 0;
}
