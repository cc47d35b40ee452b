#pragma once
// The live IndexClients, for index::interrupt_all_clients().

#include <functional>

namespace gpulock::index::detail {

/// `cancel` runs on interrupt_all_clients(), or at once when the process is already interrupted.
void register_client(const void* key, std::function<void()> cancel);
void unregister_client(const void* key);

}  // namespace gpulock::index::detail
