// Our own UDP sockets, one per served link, bound to port 547 on that interface: pushes go to
// ff02::1 and Reconfigures to a client's link-local address, both to port 546.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace mast {

class LinkSockets {
public:
    LinkSockets() = default;
    ~LinkSockets();
    LinkSockets(const LinkSockets&) = delete;
    LinkSockets& operator=(const LinkSockets&) = delete;

    // Returns an error text, empty on success.
    std::string send(const std::string& ifname, const std::array<uint8_t, 16>& dst,
                     const std::vector<uint8_t>& data);
    void closeAll();

private:
    int socketFor(const std::string& ifname, std::string& error);

    std::mutex mutex_;
    std::map<std::string, int> sockets_;
};

}  // namespace mast
