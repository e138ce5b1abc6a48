// Wire encoding of the Broadcast Prefix Push (dhcp-hooks/PUSH.md) and of RFC 8415 Reconfigure
// with Reconfigure Key authentication. Pure functions over bytes: no Kea state.
#pragma once

#include "prefix_table.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mast {

using Bytes = std::vector<uint8_t>;

constexpr uint16_t OPT_CLIENTID = 1;
constexpr uint16_t OPT_SERVERID = 2;
constexpr uint16_t OPT_AUTH = 11;
constexpr uint16_t OPT_VENDOR_OPTS = 17;
constexpr uint16_t OPT_RECONF_MSG = 19;
constexpr uint16_t OPT_RECONF_ACCEPT = 20;
// Private-use option carrying one prefix status inside a push (PUSH.md).
constexpr uint16_t OPT_MAST_PREFIX_STATUS = 65001;

constexpr uint8_t MSG_RENEW = 5;
constexpr uint8_t MSG_RECONFIGURE = 10;

constexpr uint8_t AUTH_PROTO_RECONFKEY = 3;
constexpr uint8_t AUTH_ALG_HMAC_MD5 = 1;
constexpr uint8_t AUTH_ALG_HMAC_SHA256 = 2;  // PUSH.md: our push, not an IANA value
constexpr uint8_t AUTH_RDM_COUNTER = 0;

// Vendor sub-options of the key option in Replies (PUSH.md "Key delivery").
constexpr uint16_t VSO_PUSH_KEY = 1;
constexpr uint16_t VSO_PUSH_COUNTER = 2;
constexpr uint16_t VSO_PUSH_MSG_TYPE = 3;

struct PushEntry {
    Prefix prefix;
    PrefixStatus status;
    uint32_t preferred_lifetime;
    uint32_t valid_lifetime;
};

Bytes hmacSha256(const Bytes& key, const Bytes& data);
Bytes hmacMd5(const Bytes& key, const Bytes& data);

// The push: msg-type, 24-bit transaction id (= low bits of counter), SERVERID, one
// MAST_PREFIX_STATUS per entry, AUTH last (HMAC-SHA256 over the message with the MAC zeroed).
Bytes encodePush(uint8_t msg_type, const Bytes& server_duid, const std::vector<PushEntry>& entries,
                 uint64_t counter, const Bytes& key);

// RFC 8415 section 16.11 Reconfigure (msg-type Renew), HMAC-MD5 with the client's key.
Bytes encodeReconfigure(const Bytes& server_duid, const Bytes& client_duid, uint64_t counter,
                        const Bytes& reconf_key);

// Body of the OPTION_VENDOR_OPTS that hands the push key to hosts in every Reply. Encoded once
// at load: per Reply only the replay counter changes, and this runs on Kea's hot path.
class KeyVendorOption {
public:
    KeyVendorOption(uint32_t enterprise_id, const Bytes& key, uint8_t msg_type);
    // Into `out`, whose capacity is reused: callers keep one buffer per thread.
    void encode(uint64_t counter, Bytes& out) const;

private:
    Bytes body_;
    size_t counter_at_ = 0;
};

// Body of the AUTH option (protocol 3, type 1) that hands a client its Reconfigure Key.
Bytes reconfKeyAuthOption(uint64_t counter, const Bytes& reconf_key);

// A per-client 16-byte Reconfigure Key derived from the push key: stable across Kea restarts
// without storing one key per client.
Bytes deriveReconfKey(const Bytes& push_key, const Bytes& client_duid);

}  // namespace mast
