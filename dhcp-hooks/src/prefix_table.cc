#include "prefix_table.h"

#include <arpa/inet.h>
#include <cc/data.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

using isc::data::Element;
using isc::data::ElementPtr;
using isc::data::ConstElementPtr;

namespace mast {

std::string statusName(PrefixStatus status) {
    switch (status) {
    case PrefixStatus::Preferred:
        return "preferred";
    case PrefixStatus::Discouraged:
        return "discouraged";
    case PrefixStatus::Withdrawn:
        return "withdrawn";
    }
    return "unknown";
}

PrefixStatus parseStatus(const std::string& text) {
    if (text == "preferred") {
        return PrefixStatus::Preferred;
    }
    if (text == "discouraged") {
        return PrefixStatus::Discouraged;
    }
    if (text == "withdrawn") {
        return PrefixStatus::Withdrawn;
    }
    throw std::invalid_argument("unknown status '" + text +
                                "' (expected preferred, discouraged or withdrawn)");
}

Prefix Prefix::parse(const std::string& text) {
    auto slash = text.find('/');
    if (slash == std::string::npos) {
        throw std::invalid_argument("malformed prefix '" + text + "': missing /length");
    }
    std::string addr = text.substr(0, slash);
    std::string len = text.substr(slash + 1);
    Prefix p;
    if (inet_pton(AF_INET6, addr.c_str(), p.bytes.data()) != 1) {
        throw std::invalid_argument("malformed prefix '" + text + "': not an IPv6 address");
    }
    if (len.empty() || len.size() > 3 || len.find_first_not_of("0123456789") != std::string::npos) {
        throw std::invalid_argument("malformed prefix '" + text + "': bad length");
    }
    int n = std::stoi(len);
    if (n > 128) {
        throw std::invalid_argument("malformed prefix '" + text + "': length over 128");
    }
    p.length = static_cast<uint8_t>(n);
    for (int bit = n; bit < 128; ++bit) {
        if (p.bytes[bit / 8] & (0x80 >> (bit % 8))) {
            throw std::invalid_argument("malformed prefix '" + text + "': host bits set");
        }
    }
    return p;
}

std::string Prefix::str() const {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, bytes.data(), buf, sizeof(buf));
    return std::string(buf) + "/" + std::to_string(length);
}

bool Prefix::contains(const std::array<uint8_t, 16>& addr) const {
    int full = length / 8;
    if (std::memcmp(addr.data(), bytes.data(), full) != 0) {
        return false;
    }
    int rest = length % 8;
    if (rest == 0) {
        return true;
    }
    uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
    return (addr[full] & mask) == (bytes[full] & mask);
}

void PrefixTable::load() {
    std::lock_guard<std::mutex> lock(mutex_);
    // Seed from the clock: a later counter than any the hosts saw before a lost state file.
    counter_ = static_cast<uint64_t>(std::time(nullptr)) << 20;
    std::ifstream in(state_file_);
    if (!in) {
        return;
    }
    ConstElementPtr root;
    try {
        root = Element::fromJSON(in, state_file_);
    } catch (const std::exception& ex) {
        throw std::runtime_error("state file " + state_file_ + " is not valid JSON: " + ex.what());
    }
    if (!root || root->getType() != Element::map) {
        throw std::runtime_error("state file " + state_file_ + ": top level is not a map");
    }
    auto counter = root->get("push-counter");
    if (counter && counter->getType() == Element::integer && counter->intValue() > 0) {
        counter_ = std::max(counter_, static_cast<uint64_t>(counter->intValue()));
    }
    auto prefixes = root->get("prefixes");
    if (!prefixes) {
        return;
    }
    if (prefixes->getType() != Element::list) {
        throw std::runtime_error("state file " + state_file_ + ": 'prefixes' is not a list");
    }
    for (const auto& item : prefixes->listValue()) {
        try {
            PrefixState st;
            st.prefix = Prefix::parse(item->get("prefix")->stringValue());
            st.status = parseStatus(item->get("status")->stringValue());
            if (auto v = item->get("preferred-lifetime")) {
                st.preferred_lifetime = static_cast<uint32_t>(v->intValue());
            }
            if (auto v = item->get("valid-lifetime")) {
                st.valid_lifetime = static_cast<uint32_t>(v->intValue());
            }
            states_[st.prefix] = st;
            recount();
        } catch (const std::exception& ex) {
            throw std::runtime_error("state file " + state_file_ + ": bad prefix entry " +
                                     item->str() + ": " + ex.what());
        }
    }
}

std::string PrefixTable::save() {
    ElementPtr root = Element::createMap();
    ElementPtr list = Element::createList();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        root->set("push-counter", Element::create(static_cast<int64_t>(counter_)));
        for (const auto& [prefix, st] : states_) {
            ElementPtr item = Element::createMap();
            item->set("prefix", Element::create(prefix.str()));
            item->set("status", Element::create(statusName(st.status)));
            if (st.preferred_lifetime) {
                item->set("preferred-lifetime",
                          Element::create(static_cast<int64_t>(*st.preferred_lifetime)));
            }
            if (st.valid_lifetime) {
                item->set("valid-lifetime",
                          Element::create(static_cast<int64_t>(*st.valid_lifetime)));
            }
            list->add(item);
        }
    }
    root->set("prefixes", list);
    std::string tmp = state_file_ + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (!out) {
            return std::string("cannot write ") + tmp + ": " + std::strerror(errno);
        }
        out << root->str() << "\n";
        out.flush();
        if (!out) {
            return std::string("write to ") + tmp + " failed";
        }
    }
    // rename() makes the update atomic: a crash leaves the old or the new state, never half.
    if (std::rename(tmp.c_str(), state_file_.c_str()) != 0) {
        return std::string("cannot rename ") + tmp + ": " + std::strerror(errno);
    }
    return "";
}

PrefixState PrefixTable::get(const Prefix& prefix) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = states_.find(prefix);
    if (it != states_.end()) {
        return it->second;
    }
    PrefixState st;
    st.prefix = prefix;
    return st;
}

std::vector<PrefixState> PrefixTable::all() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<PrefixState> out;
    for (const auto& [prefix, st] : states_) {
        out.push_back(st);
    }
    return out;
}

PrefixStatus PrefixTable::set(const PrefixState& state) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = states_.find(state.prefix);
    PrefixStatus old = it == states_.end() ? PrefixStatus::Preferred : it->second.status;
    states_[state.prefix] = state;
    recount();
    return old;
}

void PrefixTable::recount() {
    int n = 0;
    for (const auto& [prefix, st] : states_) {
        n += st.status != PrefixStatus::Preferred ? 1 : 0;
    }
    non_preferred_.store(n, std::memory_order_relaxed);
}

uint64_t PrefixTable::currentCounter() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return counter_;
}

uint64_t PrefixTable::nextCounter() {
    std::lock_guard<std::mutex> lock(mutex_);
    return ++counter_;
}

}  // namespace mast
