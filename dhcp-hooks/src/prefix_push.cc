#include "prefix_push.h"

#include "mast_log.h"

#include <asiolink/io_address.h>
#include <boost/make_shared.hpp>
#include <cc/command_interpreter.h>
#include <dhcp/dhcp6.h>
#include <dhcp/option6_ia.h>
#include <dhcp/option6_iaaddr.h>

#include <fstream>

#include <algorithm>
#include <cstring>

using isc::asiolink::IOAddress;
using isc::config::createAnswer;
using isc::config::CONTROL_RESULT_ERROR;
using isc::config::CONTROL_RESULT_SUCCESS;
using isc::data::ConstElementPtr;
using isc::data::Element;
using isc::data::ElementPtr;
using namespace isc::dhcp;

namespace mast {

namespace {

std::array<uint8_t, 16> addressBytes(const IOAddress& addr) {
    std::array<uint8_t, 16> out{};
    auto b = addr.toBytes();
    if (b.size() == out.size()) {
        std::copy(b.begin(), b.end(), out.begin());
    }
    return out;
}

// Bits of `addr` past `length`: the interface ID a sibling address keeps. Whole bytes at a
// time: this runs for every Reply, and a loop per bit cost more than the rest of the rewrite.
std::array<uint8_t, 16> hostPart(const std::array<uint8_t, 16>& addr, uint8_t length) {
    std::array<uint8_t, 16> out = addr;
    size_t full = length / 8;
    std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(full), 0);
    if (length % 8 != 0) {
        out[full] &= static_cast<uint8_t>(0xff >> (length % 8));
    }
    return out;
}

// The sibling of an interface ID in `prefix`, or false when the ID does not fit in it.
bool siblingIn(const Prefix& prefix, const std::array<uint8_t, 16>& ifid,
               std::array<uint8_t, 16>& out) {
    if (hostPart(ifid, prefix.length) != ifid) {
        return false;
    }
    for (size_t i = 0; i < 16; ++i) {
        out[i] = static_cast<uint8_t>(prefix.bytes[i] | ifid[i]);
    }
    return true;
}

// IOAddress::fromBytes goes through inet_ntop and back through inet_pton; asio takes the bytes.
IOAddress ioAddress(const std::array<uint8_t, 16>& bytes) {
    return IOAddress(boost::asio::ip::address(boost::asio::ip::address_v6(bytes)));
}

struct IaAddress {
    Option6IAAddrPtr option;
    std::array<uint8_t, 16> bytes;
};

std::vector<IaAddress> iaAddresses(const OptionPtr& ia) {
    std::vector<IaAddress> out;
    for (const auto& [type, sub] : ia->getOptions()) {
        if (type == D6O_IAADDR) {
            if (auto a = boost::dynamic_pointer_cast<Option6IAAddr>(sub)) {
                out.push_back({a, addressBytes(a->getAddress())});
            }
        }
    }
    return out;
}

}  // namespace

PrefixPush::PrefixPush(PushConfig config)
    : config_(std::move(config)),
      key_option_(config_.enterprise_id, config_.push_key, config_.push_msg_type),
      table_(config_.state_file) {}

// Debian's kea-dev lacks dhcpsrv/cfg_globals.h, so CfgMgr and LeaseMgr headers do not
// compile: the subnets are read from the JSON configuration Kea hands to dhcp6_srv_configured.
void PrefixPush::refreshLinks(const ConstElementPtr& json_config) {
    ConstElementPtr dhcp6 = json_config;
    if (dhcp6 && dhcp6->getType() == Element::map && dhcp6->get("Dhcp6")) {
        dhcp6 = dhcp6->get("Dhcp6");
    }
    if (!dhcp6 || dhcp6->getType() != Element::map) {
        return;
    }
    std::vector<Link> links;
    std::map<std::string, size_t> by_name;
    auto add_subnets = [&](const ConstElementPtr& list, const std::string& network,
                           const std::string& network_iface) {
        if (!list || list->getType() != Element::list) {
            return;
        }
        for (const auto& subnet : list->listValue()) {
            auto text = subnet->get("subnet");
            if (!text || text->getType() != Element::string) {
                continue;
            }
            Prefix p;
            try {
                p = Prefix::parse(text->stringValue());
            } catch (const std::exception&) {
                continue;  // Kea itself rejects such a configuration
            }
            std::string iface = network_iface;
            if (auto i = subnet->get("interface"); i && i->getType() == Element::string) {
                iface = i->stringValue();
            }
            std::string name;
            if (!network.empty()) {
                name = "shared-network " + network;
            } else if (!iface.empty()) {
                name = "interface " + iface;
            } else {
                name = "subnet " + p.str();
            }
            auto it = by_name.find(name);
            if (it == by_name.end()) {
                it = by_name.emplace(name, links.size()).first;
                links.push_back(Link{name, {}, {}});
            }
            Link& link = links[it->second];
            link.prefixes.push_back(p);
            if (!iface.empty() && std::find(link.interfaces.begin(), link.interfaces.end(),
                                            iface) == link.interfaces.end()) {
                link.interfaces.push_back(iface);
            }
        }
    };
    add_subnets(dhcp6->get("subnet6"), "", "");
    if (auto networks = dhcp6->get("shared-networks");
        networks && networks->getType() == Element::list) {
        for (const auto& net : networks->listValue()) {
            std::string name = net->get("name") ? net->get("name")->stringValue() : "";
            std::string iface;
            if (auto i = net->get("interface"); i && i->getType() == Element::string) {
                iface = i->stringValue();
            }
            add_subnets(net->get("subnet6"), name.empty() ? "unnamed" : name, iface);
        }
    }
    // Kea keeps its DUID in data-directory; pushes sent before the first Reply need it.
    std::string dir = "/var/lib/kea";
    if (auto d = dhcp6->get("data-directory"); d && d->getType() == Element::string) {
        dir = d->stringValue();
    }
    Bytes duid;
    std::ifstream in(dir + "/kea-dhcp6-serverid");
    std::string hex;
    if (in >> hex) {
        std::string digits;
        for (char c : hex) {
            if (std::isxdigit(static_cast<unsigned char>(c))) {
                digits.push_back(c);
            }
        }
        for (size_t i = 0; i + 1 < digits.size(); i += 2) {
            duid.push_back(static_cast<uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
        }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    links_ = std::make_shared<const std::vector<Link>>(std::move(links));
    if (server_duid_.empty()) {
        server_duid_ = duid;
    }
}

std::shared_ptr<const std::vector<Link>> PrefixPush::linksSnapshot() {
    std::lock_guard<std::mutex> lock(mutex_);
    return links_;
}

Bytes PrefixPush::serverDuid(const Pkt6Ptr& response) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (response) {
        if (auto sid = response->getOption(D6O_SERVERID)) {
            server_duid_ = sid->getData();
        }
    }
    return server_duid_;
}

std::pair<uint32_t, uint32_t> PrefixPush::lifetimesFor(const PrefixState& st, uint32_t pref,
                                                       uint32_t valid) const {
    switch (st.status) {
    case PrefixStatus::Preferred: {
        uint32_t v = st.valid_lifetime.value_or(valid);
        return {std::min(st.preferred_lifetime.value_or(pref), v), v};
    }
    case PrefixStatus::Discouraged:
        return {0, st.valid_lifetime.value_or(valid)};
    case PrefixStatus::Withdrawn:
        return {0, 0};
    }
    return {pref, valid};
}

bool PrefixPush::adjustLease(const std::array<uint8_t, 16>& address, uint32_t& preferred_lft,
                             SavedPreferred& saved) {
    if (!table_.anyNonPreferred()) {
        return false;
    }
    auto links_ptr = linksSnapshot();
    for (const auto& link : *links_ptr) {
        for (const auto& p : link.prefixes) {
            if (!p.contains(address)) {
                continue;
            }
            PrefixState st = table_.get(p);
            if (st.status == PrefixStatus::Preferred) {
                return false;
            }
            saved.emplace_back(address, preferred_lft);
            preferred_lft = 0;
            return true;
        }
    }
    return false;
}

void PrefixPush::rewriteResponse(const Pkt6Ptr& query, const Pkt6Ptr& response,
                                 const SavedPreferred& saved) {
    // Only Replies: siblings in an Advertise would come back as hints in the Request, which
    // costs Kea an allocation attempt each; the Reply carries them anyway.
    uint8_t type = response->getType();
    if (type != DHCPV6_REPLY) {
        return;
    }
    auto links_ptr = linksSnapshot();
    const std::vector<Link>& links = *links_ptr;
    for (const auto& [code, opt] : response->options_) {
        if (code != D6O_IA_NA) {
            continue;
        }
        auto ia = boost::dynamic_pointer_cast<Option6IA>(opt);
        if (!ia) {
            continue;
        }
        auto addrs = iaAddresses(ia);
        // The anchor is the address Kea leased (non-zero valid lifetime, in a served prefix).
        const Link* link = nullptr;
        const IaAddress* anchor = nullptr;
        Prefix anchor_prefix;
        for (const auto& a : addrs) {
            if (a.option->getValid() == 0) {
                continue;
            }
            for (const auto& l : links) {
                for (const auto& p : l.prefixes) {
                    if (p.contains(a.bytes)) {
                        link = &l;
                        anchor = &a;
                        anchor_prefix = p;
                        break;
                    }
                }
                if (link) {
                    break;
                }
            }
            if (link) {
                break;
            }
        }
        if (!link) {
            continue;
        }
        // Addresses the client itself listed in this IA (Renew/Rebind): a withdrawn sibling is
        // sent with zero lifetimes only to clients that hold it. Read only when needed: with
        // hooks, Kea deep-copies every option a callout retrieves from the query.
        std::vector<std::array<uint8_t, 16>> held;
        bool held_read = false;
        auto holds = [&](const std::array<uint8_t, 16>& addr) {
            if (!held_read && query) {
                held_read = true;
                for (const auto& qopt : query->getOptions(D6O_IA_NA)) {
                    auto qia = boost::dynamic_pointer_cast<Option6IA>(qopt.second);
                    if (qia && qia->getIAID() == ia->getIAID()) {
                        for (const auto& qa : iaAddresses(qia)) {
                            held.push_back(qa.bytes);
                        }
                    }
                }
            }
            return std::find(held.begin(), held.end(), addr) != held.end();
        };
        auto ifid = hostPart(anchor->bytes, anchor_prefix.length);
        uint32_t kea_pref = anchor->option->getPreferred();
        for (const auto& [addr, pref] : saved) {
            if (addr == anchor->bytes) {
                kea_pref = pref;  // what Kea chose before adjustLease lowered the stored lease
            }
        }
        uint32_t kea_valid = anchor->option->getValid();

        // Kea's other entries for this link's prefixes (zero-lifetime echoes of siblings the
        // client listed) give way to the siblings below; addresses outside the link stay. The
        // anchor keeps its option, lifetimes set in place: a Solicit/Request IA holds nothing
        // else, so the common Reply rebuilds nothing.
        auto ours = [&](const IaAddress& a) {
            return std::any_of(link->prefixes.begin(), link->prefixes.end(),
                               [&](const Prefix& p) { return p.contains(a.bytes); });
        };
        bool stale = std::any_of(addrs.begin(), addrs.end(), [&](const IaAddress& a) {
            return &a != anchor && ours(a);
        });
        if (stale) {
            while (ia->delOption(D6O_IAADDR)) {
            }
            for (const auto& a : addrs) {
                if (&a == anchor || !ours(a)) {
                    ia->addOption(a.option);
                }
            }
        }
        for (const auto& p : link->prefixes) {
            PrefixState st = table_.get(p);
            auto [pref, valid] = lifetimesFor(st, kea_pref, kea_valid);
            if (p == anchor_prefix) {
                anchor->option->setPreferred(pref);
                anchor->option->setValid(valid);
                continue;
            }
            std::array<uint8_t, 16> addr{};
            if (!siblingIn(p, ifid, addr)) {
                continue;
            }
            if (st.status == PrefixStatus::Withdrawn && !holds(addr)) {
                continue;
            }
            ia->addOption(
                boost::make_shared<Option6IAAddr>(D6O_IAADDR, ioAddress(addr), pref, valid));
        }
    }

    // Every Reply takes a fresh counter value: dhcpcd rejects a Reply whose replay detection
    // field is not above the last Reconfigure it accepted (RFC 8415 section 20.3).
    uint64_t counter = table_.nextCounter();
    thread_local Bytes key_body;
    key_option_.encode(counter, key_body);
    response->addOption(boost::make_shared<Option>(Option::V6, D6O_VENDOR_OPTS, key_body.begin(),
                                                   key_body.end()));

    if (!config_.reconfigure || !query || !query->getOption(D6O_RECONF_ACCEPT) ||
        !query->relay_info_.empty()) {
        return;
    }
    auto client_id = query->getOption(D6O_CLIENTID);
    if (!client_id) {
        return;
    }
    Bytes duid = client_id->getData();
    Bytes reconf_key = deriveReconfKey(config_.push_key, duid);
    while (response->delOption(D6O_AUTH)) {
    }
    response->addOption(OptionPtr(
        new Option(Option::V6, D6O_AUTH, reconfKeyAuthOption(counter, reconf_key))));
    if (!response->getOption(D6O_RECONF_ACCEPT)) {
        response->addOption(OptionPtr(new Option(Option::V6, D6O_RECONF_ACCEPT)));
    }
    ReconfigureClient client;
    client.duid = duid;
    client.address = addressBytes(query->getRemoteAddr());
    client.interface = query->getIface();
    serverDuid(response);
    std::lock_guard<std::mutex> lock(mutex_);
    clients_[duid] = client;
}

ConstElementPtr PrefixPush::setStatus(const ConstElementPtr& args) {
    if (!args || args->getType() != Element::map) {
        return createAnswer(CONTROL_RESULT_ERROR,
                            "arguments must be a map with 'prefix' and 'status'");
    }
    auto prefix_el = args->get("prefix");
    auto status_el = args->get("status");
    if (!prefix_el || prefix_el->getType() != Element::string) {
        return createAnswer(CONTROL_RESULT_ERROR, "missing string argument 'prefix'");
    }
    if (!status_el || status_el->getType() != Element::string) {
        return createAnswer(CONTROL_RESULT_ERROR, "missing string argument 'status'");
    }
    PrefixState st;
    try {
        st.prefix = Prefix::parse(prefix_el->stringValue());
        st.status = parseStatus(status_el->stringValue());
    } catch (const std::exception& ex) {
        return createAnswer(CONTROL_RESULT_ERROR, ex.what());
    }
    for (const char* name : {"preferred-lifetime", "valid-lifetime"}) {
        auto el = args->get(name);
        if (!el) {
            continue;
        }
        if (el->getType() != Element::integer || el->intValue() < 0 ||
            el->intValue() > 0xffffffffLL) {
            return createAnswer(CONTROL_RESULT_ERROR,
                                std::string("'") + name + "' must be an integer 0..4294967295");
        }
        auto v = static_cast<uint32_t>(el->intValue());
        if (std::string(name) == "preferred-lifetime") {
            st.preferred_lifetime = v;
        } else {
            st.valid_lifetime = v;
        }
    }
    std::vector<Link> serving;
    for (const auto& link : *linksSnapshot()) {
        if (std::find(link.prefixes.begin(), link.prefixes.end(), st.prefix) !=
            link.prefixes.end()) {
            serving.push_back(link);
        }
    }
    if (serving.empty()) {
        return createAnswer(CONTROL_RESULT_ERROR, "prefix " + st.prefix.str() +
                                                      " is not served by any configured subnet6");
    }
    PrefixStatus old = table_.set(st);
    LOG_INFO(mast_logger, MAST_STATUS_SET)
        .arg(st.prefix.str())
        .arg(statusName(st.status))
        .arg(statusName(old));

    Bytes server_duid = serverDuid(Pkt6Ptr());
    int links_pushed = 0;
    int reconfigures = 0;
    uint64_t last_counter = 0;
    std::array<uint8_t, 16> all_nodes{};
    all_nodes[0] = 0xff;
    all_nodes[1] = 0x02;
    all_nodes[15] = 0x01;
    std::vector<ReconfigureClient> clients;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& [duid, c] : clients_) {
            clients.push_back(c);
        }
    }
    for (const auto& link : serving) {
        // Every push carries the whole link's state, so a host that missed one catches up.
        std::vector<PushEntry> entries;
        for (const auto& p : link.prefixes) {
            PrefixState ps = table_.get(p);
            auto [pref, valid] = lifetimesFor(ps, 0, 0);
            entries.push_back(PushEntry{p, ps.status, ps.preferred_lifetime.value_or(pref),
                                        ps.valid_lifetime.value_or(valid)});
        }
        // The changed prefix goes first: hosts log it as the cause.
        std::stable_partition(entries.begin(), entries.end(),
                              [&](const PushEntry& e) { return e.prefix == st.prefix; });
        for (const auto& iface : link.interfaces) {
            uint64_t counter = table_.nextCounter();
            last_counter = counter;
            Bytes msg = encodePush(config_.push_msg_type, server_duid, entries, counter,
                                   config_.push_key);
            std::string error = sockets_.send(iface, all_nodes, msg);
            if (error.empty()) {
                ++links_pushed;
                LOG_INFO(mast_logger, MAST_PUSH_SENT)
                    .arg(st.prefix.str())
                    .arg(iface)
                    .arg(counter);
            } else {
                LOG_ERROR(mast_logger, MAST_PUSH_FAILED).arg(iface).arg(error);
            }
        }
        if (!config_.reconfigure) {
            continue;
        }
        for (const auto& c : clients) {
            if (std::find(link.interfaces.begin(), link.interfaces.end(), c.interface) ==
                link.interfaces.end()) {
                continue;
            }
            uint64_t counter = table_.nextCounter();
            last_counter = counter;
            Bytes msg = encodeReconfigure(server_duid, c.duid, counter,
                                          deriveReconfKey(config_.push_key, c.duid));
            std::string to = IOAddress::fromBytes(AF_INET6, c.address.data()).toText();
            std::string error = sockets_.send(c.interface, c.address, msg);
            if (error.empty()) {
                ++reconfigures;
                LOG_DEBUG(mast_logger, isc::log::DBGLVL_TRACE_BASIC, MAST_RECONFIGURE_SENT)
                    .arg(to)
                    .arg(c.interface);
            } else {
                LOG_ERROR(mast_logger, MAST_RECONFIGURE_FAILED).arg(to).arg(c.interface).arg(error);
            }
        }
    }
    std::string save_error = table_.save();
    if (!save_error.empty()) {
        LOG_ERROR(mast_logger, MAST_STATE_SAVE_FAILED).arg(table_.stateFile()).arg(save_error);
    }
    ElementPtr out = Element::createMap();
    out->set("prefix", Element::create(st.prefix.str()));
    out->set("status", Element::create(statusName(st.status)));
    out->set("previous-status", Element::create(statusName(old)));
    out->set("links-pushed", Element::create(links_pushed));
    out->set("reconfigures-sent", Element::create(reconfigures));
    out->set("push-counter", Element::create(static_cast<int64_t>(last_counter)));
    out->set("state-saved", Element::create(save_error.empty()));
    std::string text = "prefix " + st.prefix.str() + " is " + statusName(st.status);
    if (!save_error.empty()) {
        text += " (state file not written: " + save_error + ")";
    }
    return createAnswer(CONTROL_RESULT_SUCCESS, text, out);
}

ConstElementPtr PrefixPush::list() {
    ElementPtr items = Element::createList();
    std::vector<Prefix> seen;
    for (const auto& link : *linksSnapshot()) {
        for (const auto& p : link.prefixes) {
            PrefixState st = table_.get(p);
            ElementPtr item = Element::createMap();
            item->set("prefix", Element::create(p.str()));
            item->set("status", Element::create(statusName(st.status)));
            item->set("link", Element::create(link.name));
            ElementPtr ifaces = Element::createList();
            for (const auto& i : link.interfaces) {
                ifaces->add(Element::create(i));
            }
            item->set("interfaces", ifaces);
            if (st.preferred_lifetime) {
                item->set("preferred-lifetime",
                          Element::create(static_cast<int64_t>(*st.preferred_lifetime)));
            }
            if (st.valid_lifetime) {
                item->set("valid-lifetime",
                          Element::create(static_cast<int64_t>(*st.valid_lifetime)));
            }
            item->set("served", Element::create(true));
            items->add(item);
            seen.push_back(p);
        }
    }
    // Statuses kept in the state file for prefixes no longer configured are shown, not hidden.
    for (const auto& st : table_.all()) {
        if (std::find(seen.begin(), seen.end(), st.prefix) != seen.end()) {
            continue;
        }
        ElementPtr item = Element::createMap();
        item->set("prefix", Element::create(st.prefix.str()));
        item->set("status", Element::create(statusName(st.status)));
        item->set("served", Element::create(false));
        items->add(item);
    }
    ElementPtr out = Element::createMap();
    out->set("prefixes", items);
    out->set("push-counter", Element::create(static_cast<int64_t>(table_.currentCounter())));
    return createAnswer(CONTROL_RESULT_SUCCESS,
                        std::to_string(items->size()) + " prefixes", out);
}

}  // namespace mast
