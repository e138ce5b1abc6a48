#include "push_codec.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

namespace mast {

namespace {

void put16(Bytes& out, uint16_t v) {
    out.push_back(static_cast<uint8_t>(v >> 8));
    out.push_back(static_cast<uint8_t>(v));
}

void put32(Bytes& out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) {
        out.push_back(static_cast<uint8_t>(v >> shift));
    }
}

void put64(Bytes& out, uint64_t v) {
    for (int shift = 56; shift >= 0; shift -= 8) {
        out.push_back(static_cast<uint8_t>(v >> shift));
    }
}

void putOption(Bytes& out, uint16_t code, const Bytes& body) {
    put16(out, code);
    put16(out, static_cast<uint16_t>(body.size()));
    out.insert(out.end(), body.begin(), body.end());
}

Bytes hmac(const EVP_MD* md, const Bytes& key, const Bytes& data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    HMAC(md, key.data(), static_cast<int>(key.size()), data.data(), data.size(), out, &len);
    return Bytes(out, out + len);
}

// Appends the AUTH option with a zeroed MAC, signs the whole message, then fills the MAC in:
// the MAC covers every byte the receiver sees except itself (RFC 8415 section 20.4 style).
Bytes signWithAuth(Bytes msg, uint8_t algorithm, uint64_t counter, uint8_t type,
                   const Bytes& key) {
    size_t mac_len = algorithm == AUTH_ALG_HMAC_MD5 ? 16 : 32;
    Bytes auth;
    auth.push_back(AUTH_PROTO_RECONFKEY);
    auth.push_back(algorithm);
    auth.push_back(AUTH_RDM_COUNTER);
    put64(auth, counter);
    auth.push_back(type);
    auth.insert(auth.end(), mac_len, 0);
    putOption(msg, OPT_AUTH, auth);
    Bytes mac = algorithm == AUTH_ALG_HMAC_MD5 ? hmacMd5(key, msg) : hmacSha256(key, msg);
    std::memcpy(msg.data() + msg.size() - mac_len, mac.data(), mac_len);
    return msg;
}

}  // namespace

Bytes hmacSha256(const Bytes& key, const Bytes& data) { return hmac(EVP_sha256(), key, data); }

Bytes hmacMd5(const Bytes& key, const Bytes& data) { return hmac(EVP_md5(), key, data); }

Bytes encodePush(uint8_t msg_type, const Bytes& server_duid, const std::vector<PushEntry>& entries,
                 uint64_t counter, const Bytes& key) {
    Bytes msg;
    msg.push_back(msg_type);
    msg.push_back(static_cast<uint8_t>(counter >> 16));
    msg.push_back(static_cast<uint8_t>(counter >> 8));
    msg.push_back(static_cast<uint8_t>(counter));
    putOption(msg, OPT_SERVERID, server_duid);
    for (const auto& e : entries) {
        Bytes body;
        body.push_back(static_cast<uint8_t>(e.status));
        body.push_back(e.prefix.length);
        put32(body, e.preferred_lifetime);
        put32(body, e.valid_lifetime);
        body.insert(body.end(), e.prefix.bytes.begin(), e.prefix.bytes.end());
        putOption(msg, OPT_MAST_PREFIX_STATUS, body);
    }
    return signWithAuth(std::move(msg), AUTH_ALG_HMAC_SHA256, counter, 2, key);
}

Bytes encodeReconfigure(const Bytes& server_duid, const Bytes& client_duid, uint64_t counter,
                        const Bytes& reconf_key) {
    Bytes msg{MSG_RECONFIGURE, 0, 0, 0};  // RFC 8415: transaction-id 0 in Reconfigure
    putOption(msg, OPT_SERVERID, server_duid);
    putOption(msg, OPT_CLIENTID, client_duid);
    putOption(msg, OPT_RECONF_MSG, Bytes{MSG_RENEW});
    return signWithAuth(std::move(msg), AUTH_ALG_HMAC_MD5, counter, 2, reconf_key);
}

KeyVendorOption::KeyVendorOption(uint32_t enterprise_id, const Bytes& key, uint8_t msg_type) {
    put32(body_, enterprise_id);
    putOption(body_, VSO_PUSH_KEY, key);
    put16(body_, VSO_PUSH_COUNTER);
    put16(body_, 8);
    counter_at_ = body_.size();
    put64(body_, 0);
    putOption(body_, VSO_PUSH_MSG_TYPE, Bytes{msg_type});
}

void KeyVendorOption::encode(uint64_t counter, Bytes& out) const {
    out.assign(body_.begin(), body_.end());
    for (size_t i = 0; i < 8; ++i) {
        out[counter_at_ + i] = static_cast<uint8_t>(counter >> (56 - 8 * i));
    }
}

Bytes reconfKeyAuthOption(uint64_t counter, const Bytes& reconf_key) {
    Bytes auth;
    auth.push_back(AUTH_PROTO_RECONFKEY);
    auth.push_back(AUTH_ALG_HMAC_MD5);
    auth.push_back(AUTH_RDM_COUNTER);
    put64(auth, counter);
    auth.push_back(1);  // type 1: the Reconfigure Key value itself
    auth.insert(auth.end(), reconf_key.begin(), reconf_key.end());
    return auth;
}

Bytes deriveReconfKey(const Bytes& push_key, const Bytes& client_duid) {
    Bytes input{'r', 'e', 'c', 'o', 'n', 'f', 'i', 'g', 'u', 'r', 'e'};
    input.insert(input.end(), client_duid.begin(), client_duid.end());
    Bytes full = hmacSha256(push_key, input);
    return Bytes(full.begin(), full.begin() + 16);
}

}  // namespace mast
