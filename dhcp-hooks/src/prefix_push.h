// The testable core of the hook: which prefixes share a link, how a Reply's IA_NA gets its
// sibling addresses, and what a status change sends (push + Reconfigures). The extern "C"
// callouts in mast_callouts.cc only translate Kea's arguments into calls on this class.
#pragma once

#include "link_socket.h"
#include "prefix_table.h"
#include "push_codec.h"

#include <cc/data.h>
#include <dhcp/pkt6.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mast {

struct PushConfig {
    Bytes push_key;
    uint8_t push_msg_type = 250;
    uint32_t enterprise_id = 32473;  // RFC 5612 documentation enterprise number
    bool reconfigure = true;
    std::string state_file;
};

// One link: the provider prefixes (subnet6) served on it, and the interfaces that reach it.
struct Link {
    std::string name;
    std::vector<std::string> interfaces;
    std::vector<Prefix> prefixes;
};

// A client that sent Reconfigure Accept, as last seen in a Request/Renew/Rebind.
struct ReconfigureClient {
    Bytes duid;
    std::array<uint8_t, 16> address{};
    std::string interface;
};

class PrefixPush {
public:
    explicit PrefixPush(PushConfig config);

    // Re-reads the subnet6 / shared-networks layout (after every (re)configuration).
    void refreshLinks(const isc::data::ConstElementPtr& json_config);

    // Original preferred lifetimes of leases whose stored value the hook lowered, by address.
    using SavedPreferred = std::vector<std::pair<std::array<uint8_t, 16>, uint32_t>>;

    // lease6_renew / lease6_rebind: the lease Kea stores gets the preferred
    // lifetime its prefix's status allows (the lease DB says what the client is told).
    // Returns true and fills `saved` when it lowered it.
    bool adjustLease(const std::array<uint8_t, 16>& address, uint32_t& preferred_lft,
                     SavedPreferred& saved);

    // pkt6_send: sibling addresses + lifetimes by status, key options, client bookkeeping.
    // `saved` holds the preferred lifetimes Kea chose before adjustLease lowered them.
    void rewriteResponse(const isc::dhcp::Pkt6Ptr& query, const isc::dhcp::Pkt6Ptr& response,
                         const SavedPreferred& saved = {});

    // Control commands; each returns Kea's usual {"result", "text", "arguments"} answer.
    isc::data::ConstElementPtr setStatus(const isc::data::ConstElementPtr& args);
    isc::data::ConstElementPtr list();

    PrefixTable& table() { return table_; }
    bool anyNonPreferred() const { return table_.anyNonPreferred(); }
    const PushConfig& config() const { return config_; }
    void shutdown() { sockets_.closeAll(); }

private:
    // Replaced whole on reconfiguration, shared read-only by packet threads: no copy per Reply.
    std::shared_ptr<const std::vector<Link>> linksSnapshot();
    Bytes serverDuid(const isc::dhcp::Pkt6Ptr& response);
    std::pair<uint32_t, uint32_t> lifetimesFor(const PrefixState& st, uint32_t pref,
                                               uint32_t valid) const;

    PushConfig config_;
    KeyVendorOption key_option_;
    PrefixTable table_;
    LinkSockets sockets_;
    std::mutex mutex_;  // links_, clients_, server_duid_
    std::shared_ptr<const std::vector<Link>> links_ = std::make_shared<std::vector<Link>>();
    std::map<Bytes, ReconfigureClient> clients_;
    Bytes server_duid_;
};

}  // namespace mast
