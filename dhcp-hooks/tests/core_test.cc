// Drives PrefixPush without a running server: Reply rewriting by status, key options, and the
// push encoding (printed as hex so the Python suite can compare it with mast_client.wire).
// Usage: dhcp_mast_core_test STATE_DIR  -> exit 0 and "push <hex>" on success.
#include "prefix_push.h"

#include <asiolink/io_address.h>
#include <cc/data.h>
#include <dhcp/dhcp6.h>
#include <dhcp/option6_ia.h>
#include <dhcp/option6_iaaddr.h>
#include <log/logger_support.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <string>

using isc::asiolink::IOAddress;
using isc::data::Element;
using namespace isc::dhcp;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
    if (!ok) {
        std::cerr << "FAIL: " << what << "\n";
        ++failures;
    }
}

// address -> (preferred, valid) of every IAADDR in the Reply's IA_NA
std::map<std::string, std::pair<uint32_t, uint32_t>> lifetimes(const Pkt6Ptr& reply) {
    std::map<std::string, std::pair<uint32_t, uint32_t>> out;
    auto ia = boost::dynamic_pointer_cast<Option6IA>(reply->getOption(D6O_IA_NA));
    for (const auto& [type, sub] : ia->getOptions()) {
        auto a = boost::dynamic_pointer_cast<Option6IAAddr>(sub);
        if (a) {
            out[a->getAddress().toText()] = {a->getPreferred(), a->getValid()};
        }
    }
    return out;
}

Pkt6Ptr reply(const std::vector<std::string>& addrs) {
    Pkt6Ptr r(new Pkt6(DHCPV6_REPLY, 1));
    Option6IAPtr ia(new Option6IA(D6O_IA_NA, 7));
    bool first = true;
    for (const auto& a : addrs) {
        // Kea's own lease first; hints it could not honour come with zero lifetimes.
        ia->addOption(OptionPtr(
            new Option6IAAddr(D6O_IAADDR, IOAddress(a), first ? 3000 : 0, first ? 4000 : 0)));
        first = false;
    }
    r->addOption(ia);
    return r;
}

Pkt6Ptr query(bool reconfigure_accept, const std::vector<std::string>& held = {}) {
    Pkt6Ptr q(new Pkt6(DHCPV6_RENEW, 1));
    q->addOption(OptionPtr(new Option(Option::V6, D6O_CLIENTID, std::vector<uint8_t>(10, 2))));
    if (reconfigure_accept) {
        q->addOption(OptionPtr(new Option(Option::V6, D6O_RECONF_ACCEPT)));
    }
    Option6IAPtr ia(new Option6IA(D6O_IA_NA, 7));
    for (const auto& a : held) {
        ia->addOption(OptionPtr(new Option6IAAddr(D6O_IAADDR, IOAddress(a), 0, 0)));
    }
    q->addOption(ia);
    return q;
}

mast::PrefixState state(const std::string& prefix, mast::PrefixStatus status) {
    mast::PrefixState s;
    s.prefix = mast::Prefix::parse(prefix);
    s.status = status;
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: dhcp_mast_core_test STATE_DIR\n";
        return 64;
    }
    isc::log::initLogger("dhcp_mast_core_test", isc::log::WARN);
    mast::PushConfig cfg;
    cfg.push_key = mast::Bytes(32, 0x11);
    cfg.state_file = std::string(argv[1]) + "/core-test-state.json";
    std::remove(cfg.state_file.c_str());
    mast::PrefixPush push(cfg);
    push.refreshLinks(Element::fromJSON(R"({"Dhcp6": {"shared-networks": [{"name": "lan",
        "interface": "lo", "subnet6": [{"subnet": "2001:db8:a::/64"},
        {"subnet": "2001:db8:b::/64"}, {"subnet": "2001:db8:c::/64"}]}],
        "subnet6": [{"subnet": "2001:db8:ff::/64", "interface": "lo"}]}})"));

    // All preferred: siblings in B and C with Kea's lifetimes, same interface ID.
    auto r = reply({"2001:db8:a::123"});
    push.rewriteResponse(query(false), r);
    auto lt = lifetimes(r);
    check(lt.size() == 3, "three addresses in the IA_NA");
    check(lt["2001:db8:b::123"] == std::make_pair(3000u, 4000u), "B sibling lifetimes");
    check(lt["2001:db8:c::123"] == std::make_pair(3000u, 4000u), "C sibling lifetimes");
    check(r->getOption(D6O_VENDOR_OPTS) != nullptr, "key vendor option in every Reply");
    check(r->getOption(D6O_AUTH) == nullptr, "no Reconfigure Key without Reconfigure Accept");

    // Discouraged A (the anchor itself) and withdrawn C.
    push.table().set(state("2001:db8:a::/64", mast::PrefixStatus::Discouraged));
    push.table().set(state("2001:db8:c::/64", mast::PrefixStatus::Withdrawn));
    r = reply({"2001:db8:a::123", "2001:db8:b::123"});  // a Renew: Kea zeroes the B hint
    push.rewriteResponse(query(true), r);
    lt = lifetimes(r);
    check(lt["2001:db8:a::123"] == std::make_pair(0u, 4000u), "discouraged: preferred 0");
    check(lt["2001:db8:b::123"] == std::make_pair(3000u, 4000u), "B replaces Kea's zeroed hint");
    check(lt.count("2001:db8:c::123") == 0, "withdrawn sibling not offered to a non-holder");
    auto auth = r->getOption(D6O_AUTH);
    check(auth && auth->getData().size() == 3 + 8 + 1 + 16 && auth->getData()[0] == 3,
          "Reconfigure Key (protocol 3, 16-byte key) for a Reconfigure-accepting client");
    check(r->getOption(D6O_RECONF_ACCEPT) != nullptr, "Reply carries Reconfigure Accept");

    r = reply({"2001:db8:a::123"});
    push.rewriteResponse(query(false, {"2001:db8:c::123"}), r);
    lt = lifetimes(r);
    check(lt.count("2001:db8:c::123") == 1 &&
              lt["2001:db8:c::123"] == std::make_pair(0u, 0u),
          "withdrawn sibling sent with 0/0 to the client that holds it");

    // The stored lease of a discouraged prefix gets preferred 0; siblings keep Kea's value.
    std::array<uint8_t, 16> a_addr{};
    auto a_bytes = IOAddress("2001:db8:a::123").toBytes();
    std::copy(a_bytes.begin(), a_bytes.end(), a_addr.begin());
    uint32_t lease_pref = 3000;
    mast::PrefixPush::SavedPreferred saved;
    check(push.adjustLease(a_addr, lease_pref, saved) && lease_pref == 0 && saved.size() == 1,
          "lease preferred lifetime lowered and the original saved");
    r = reply({"2001:db8:a::123"});
    boost::dynamic_pointer_cast<Option6IAAddr>(
        r->getOption(D6O_IA_NA)->getOption(D6O_IAADDR))->setPreferred(0);
    push.rewriteResponse(query(false), r, saved);
    lt = lifetimes(r);
    check(lt["2001:db8:b::123"] == std::make_pair(3000u, 4000u),
          "sibling lifetimes from the saved preferred lifetime");

    // Addresses outside the link's prefixes are left as Kea made them.
    r = reply({"2001:db8:ff::5"});
    push.rewriteResponse(query(false), r);
    check(lifetimes(r).size() == 1, "a link with one prefix gets no siblings");

    // Commands: errors are result 1 with a reason; success reports the push.
    auto answer = push.setStatus(Element::fromJSON(R"({"prefix": "2001:db8:d::/64",
        "status": "discouraged"})"));
    check(answer->get("result")->intValue() == 1 &&
              answer->get("text")->stringValue().find("not served") != std::string::npos,
          "unserved prefix refused");
    answer = push.setStatus(Element::fromJSON(R"({"prefix": "2001:db8:b::/64",
        "status": "discouraged", "valid-lifetime": 600})"));
    check(answer->get("result")->intValue() == 0, "status set");
    // lo has no multicast: the send fails, is logged, and the count says so.
    check(answer->get("arguments")->get("links-pushed")->intValue() == 0 &&
              answer->get("arguments")->get("reconfigures-sent")->intValue() == 0,
          "push counts reported");

    // Persistence: a new instance reads the statuses back.
    mast::PrefixPush again(cfg);
    again.table().load();
    check(again.table().get(mast::Prefix::parse("2001:db8:b::/64")).status ==
              mast::PrefixStatus::Discouraged,
          "status survives a restart");
    check(again.table().currentCounter() >= push.table().currentCounter(),
          "counter never goes back");

    // A push with fixed inputs, for the cross-implementation check in Python.
    std::vector<mast::PushEntry> entries{
        {mast::Prefix::parse("2001:db8:a::/64"), mast::PrefixStatus::Discouraged, 0, 0},
        {mast::Prefix::parse("2001:db8:b::/64"), mast::PrefixStatus::Preferred, 0, 0}};
    auto msg = mast::encodePush(250, mast::Bytes{0, 4, 'm', 'a', 's', 't'}, entries, 4242,
                                cfg.push_key);
    std::printf("push ");
    for (auto b : msg) {
        std::printf("%02x", b);
    }
    std::printf("\n");
    return failures == 0 ? 0 : 1;
}
