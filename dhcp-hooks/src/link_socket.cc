#include "link_socket.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mast {

namespace {
constexpr uint16_t SERVER_PORT = 547;
constexpr uint16_t CLIENT_PORT = 546;
}  // namespace

LinkSockets::~LinkSockets() { closeAll(); }

void LinkSockets::closeAll() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [name, fd] : sockets_) {
        close(fd);
    }
    sockets_.clear();
}

int LinkSockets::socketFor(const std::string& ifname, std::string& error) {
    auto it = sockets_.find(ifname);
    if (it != sockets_.end()) {
        return it->second;
    }
    unsigned int index = if_nametoindex(ifname.c_str());
    if (index == 0) {
        error = "no interface " + ifname;
        return -1;
    }
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = std::string("socket: ") + std::strerror(errno);
        return -1;
    }
    int one = 1;
    int zero = 0;
    int hops = 1;
    int small = 1;
    int ifindex = static_cast<int>(index);
    // Kea's own sockets hold port 547 with SO_REUSEADDR; ours shares the port only to send
    // from it. It joins no group and opts out of other sockets' groups, so it receives little.
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
#ifdef IPV6_MULTICAST_ALL
    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_ALL, &zero, sizeof(zero));
#endif
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &zero, sizeof(zero));
    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops));
    if (setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname.c_str(),
                   static_cast<socklen_t>(ifname.size())) != 0) {
        error = std::string("binding to ") + ifname + ": " + std::strerror(errno);
        close(fd);
        return -1;
    }
    sockaddr_in6 local{};
    local.sin6_family = AF_INET6;
    local.sin6_port = htons(SERVER_PORT);
    local.sin6_addr = in6addr_any;
    if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
        error = std::string("bind [::]:547 on ") + ifname + ": " + std::strerror(errno);
        close(fd);
        return -1;
    }
    sockets_[ifname] = fd;
    return fd;
}

std::string LinkSockets::send(const std::string& ifname, const std::array<uint8_t, 16>& dst,
                              const std::vector<uint8_t>& data) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string error;
    int fd = socketFor(ifname, error);
    if (fd < 0) {
        return error;
    }
    sockaddr_in6 to{};
    to.sin6_family = AF_INET6;
    to.sin6_port = htons(CLIENT_PORT);
    std::memcpy(&to.sin6_addr, dst.data(), 16);
    to.sin6_scope_id = if_nametoindex(ifname.c_str());
    ssize_t sent = sendto(fd, data.data(), data.size(), 0, reinterpret_cast<sockaddr*>(&to),
                          sizeof(to));
    if (sent < 0) {
        return std::string("sendto: ") + std::strerror(errno);
    }
    return "";
}

}  // namespace mast
