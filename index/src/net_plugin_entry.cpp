// libgpulock-net.so's entry point (net_plugin.h): the table of what needs libcurl, libzip and
// libcrypto. Built with hidden visibility; this function is the only exported symbol.
#include <openssl/evp.h>

#include "net_impl.h"
#include "net_plugin.h"

namespace gpulock::index::net {
namespace {

// OpenSSL 3 EVP SHA-256. The fetched EVP_MD is reused for every context: fetching it per
// context is what makes hashing small inputs through EVP slow.
const EVP_MD* sha256_md() {
  static const EVP_MD* md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched ? fetched : EVP_sha256();
  }();
  return md;
}

void* sha256_new() {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (ctx) EVP_DigestInit_ex(ctx, sha256_md(), nullptr);
  return ctx;
}

void sha256_update(void* ctx, const void* data, std::size_t size) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx), data, size);
}

void sha256_finish(void* ctx, unsigned char* out32) {
  auto* c = static_cast<EVP_MD_CTX*>(ctx);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(c, digest, &length);
  for (unsigned i = 0; i < 32; ++i)
    out32[i] = i < length ? digest[i] : 0;
  EVP_DigestInit_ex(c, sha256_md(), nullptr);
}

void sha256_free(void* ctx) {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx));
}

const detail::NetPluginTable kTable = [] {
  detail::NetPluginTable t;
  t.make_transport = &make_curl_transport;
  t.metadata_from_file = &metadata_from_file;
  t.metadata_via_ranges = &metadata_via_ranges;
  t.metadata_from_buffer = &metadata_from_buffer;
  t.unpack_archive = &unpack_archive;
  t.sha256_new = &sha256_new;
  t.sha256_update = &sha256_update;
  t.sha256_finish = &sha256_finish;
  t.sha256_free = &sha256_free;
  return t;
}();

}  // namespace
}  // namespace gpulock::index::net

extern "C" __attribute__((visibility("default"))) const gpulock::index::detail::NetPluginTable*
gpulock_net_plugin_v1() {
  return &gpulock::index::net::kTable;
}
