// Writes a small lock to argv[1] through gpulock::lock::write_lock_file, for the atomic-write
// tests that must run it as another user (setpriv) or under a file-size limit.
// Exit 0 on success; on failure prints the error and exits 74.
#include <cstdio>
#include <string>

#include "gpulock/lock/lockfile.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lock_write_helper PATH\n");
    return 2;
  }
  gpulock::lock::Lock lock;
  lock.created_by = "lock_write_helper";
  gpulock::lock::Package p;
  p.name = "a";
  p.version = "1.0";
  gpulock::lock::FileEntry w;
  w.name = "a-1.0-py3-none-any.whl";
  w.url = "https://example.org/a-1.0-py3-none-any.whl";
  w.hashes.emplace("sha256", std::string(64, 'a'));
  p.wheels = std::vector<gpulock::lock::FileEntry>{w};
  lock.packages.push_back(p);
  auto status = gpulock::lock::write_lock_file(argv[1], lock);
  if (!status) {
    std::fprintf(stderr, "error: %s\n", status.error().to_string().c_str());
    return 74;
  }
  return 0;
}
