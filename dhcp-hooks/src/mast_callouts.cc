// extern "C" glue between Kea's hooks framework and PrefixPush: parameter parsing in load(),
// one callout per hook point, the two control commands. No logic lives here.
#include "mast_log.h"
#include "prefix_push.h"

#include <asiolink/io_address.h>
#include <cc/command_interpreter.h>
#include <dhcpsrv/lease.h>
#include <hooks/hooks.h>

#include <cstdio>
#include <memory>
#include <sstream>

using isc::config::createAnswer;
using isc::data::ConstElementPtr;
using isc::data::Element;
using namespace isc::hooks;

namespace {

std::unique_ptr<mast::PrefixPush> push;

mast::Bytes parseHexKey(const std::string& hex) {
    std::string digits;
    for (char c : hex) {
        if (c == ':' || c == ' ') {
            continue;
        }
        if (!std::isxdigit(static_cast<unsigned char>(c))) {
            throw std::invalid_argument("'push-key' must be hex digits");
        }
        digits.push_back(c);
    }
    if (digits.size() % 2 != 0 || digits.size() < 32) {
        throw std::invalid_argument("'push-key' must be at least 16 bytes (32 hex digits)");
    }
    mast::Bytes key;
    for (size_t i = 0; i < digits.size(); i += 2) {
        key.push_back(static_cast<uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
    }
    return key;
}

mast::PushConfig parseParameters(LibraryHandle& handle) {
    mast::PushConfig cfg;
    auto key = handle.getParameter("push-key");
    if (!key || key->getType() != Element::string) {
        throw std::invalid_argument("missing string parameter 'push-key' (hex)");
    }
    cfg.push_key = parseHexKey(key->stringValue());
    if (auto mt = handle.getParameter("push-message-type")) {
        // Types 1..36 are assigned by IANA (RFC 8415 and later); the push must not look like one.
        if (mt->getType() != Element::integer || mt->intValue() < 37 || mt->intValue() > 255) {
            throw std::invalid_argument("'push-message-type' must be an integer 37..255");
        }
        cfg.push_msg_type = static_cast<uint8_t>(mt->intValue());
    }
    if (auto en = handle.getParameter("enterprise-id")) {
        if (en->getType() != Element::integer || en->intValue() < 0 ||
            en->intValue() > 0xffffffffLL) {
            throw std::invalid_argument("'enterprise-id' must be an integer 0..4294967295");
        }
        cfg.enterprise_id = static_cast<uint32_t>(en->intValue());
    }
    if (auto rc = handle.getParameter("reconfigure")) {
        if (rc->getType() != Element::boolean) {
            throw std::invalid_argument("'reconfigure' must be true or false");
        }
        cfg.reconfigure = rc->boolValue();
    }
    auto state = handle.getParameter("state-file");
    if (state && state->getType() != Element::string) {
        throw std::invalid_argument("'state-file' must be a string path");
    }
    cfg.state_file = state ? state->stringValue() : "/var/lib/kea/mast-prefix-state.json";
    return cfg;
}

int commandCallout(CalloutHandle& handle, bool set) {
    ConstElementPtr command;
    handle.getArgument("command", command);
    ConstElementPtr response;
    try {
        if (!push) {
            response = createAnswer(isc::config::CONTROL_RESULT_ERROR, "MAST hook not loaded");
        } else if (set) {
            ConstElementPtr args = command ? command->get("arguments") : ConstElementPtr();
            response = push->setStatus(args);
        } else {
            response = push->list();
        }
    } catch (const std::exception& ex) {
        response = createAnswer(isc::config::CONTROL_RESULT_ERROR, ex.what());
    }
    handle.setArgument("response", response);
    return 0;
}

// The lease callouts and pkt6_send of one packet share the callout handle, so the preferred
// lifetime Kea chose survives in the handle's context until the Reply is built. No
// lease6_select callout: merely registering one made Kea's allocation path ~20 % slower under
// perfdhcp (benchmarks/bench_dhcp.py); a new lease's stored preferred lifetime is corrected at
// the client's first Renew/Rebind (Reconfigure makes that immediate).
constexpr const char* SAVED_PREFERRED = "mast-saved-preferred";

int adjustLeaseCallout(CalloutHandle& handle, const char* name) {
    if (!push) {
        return 0;
    }
    try {
        if (!push->anyNonPreferred()) {
            return 0;
        }
        isc::dhcp::Lease6Ptr lease;
        handle.getArgument("lease6", lease);
        if (!lease || lease->type_ != isc::dhcp::Lease::TYPE_NA) {
            return 0;
        }
        std::array<uint8_t, 16> addr{};
        auto bytes = lease->addr_.toBytes();
        if (bytes.size() != addr.size()) {
            return 0;
        }
        std::copy(bytes.begin(), bytes.end(), addr.begin());
        mast::PrefixPush::SavedPreferred saved;
        try {
            handle.getContext(SAVED_PREFERRED, saved);
        } catch (const NoSuchCalloutContext&) {
        }
        if (push->adjustLease(addr, lease->preferred_lft_, saved)) {
            handle.setContext(SAVED_PREFERRED, saved);
        }
    } catch (const std::exception& ex) {
        LOG_ERROR(mast::mast_logger, mast::MAST_CALLOUT_ERROR).arg(name).arg(ex.what());
    }
    return 0;
}

}  // namespace

extern "C" {

int version() { return KEA_HOOKS_VERSION; }

// Shared state is guarded by mutexes (PrefixTable, PrefixPush, LinkSockets).
int multi_threading_compatible() { return 1; }

int load(LibraryHandle& handle) {
    try {
        auto cfg = parseParameters(handle);
        push = std::make_unique<mast::PrefixPush>(cfg);
        try {
            push->table().load();
        } catch (const std::runtime_error& ex) {
            // DHCP service for the whole stub matters more than one lost status: keep serving
            // (all prefixes preferred) and keep the bad file for the operator; SRMS re-applies.
            std::string aside = cfg.state_file + ".corrupt";
            std::rename(cfg.state_file.c_str(), aside.c_str());
            LOG_ERROR(mast::mast_logger, mast::MAST_STATE_CORRUPT).arg(ex.what()).arg(aside);
        }
        LOG_INFO(mast::mast_logger, mast::MAST_STATE_LOADED)
            .arg(cfg.state_file)
            .arg(push->table().all().size())
            .arg(push->table().currentCounter());
        handle.registerCommandCallout("mast-prefix-status", [](CalloutHandle& h) {
            return commandCallout(h, true);
        });
        handle.registerCommandCallout("mast-prefix-list", [](CalloutHandle& h) {
            return commandCallout(h, false);
        });
        LOG_INFO(mast::mast_logger, mast::MAST_LOAD_OK)
            .arg(static_cast<int>(cfg.push_msg_type))
            .arg(cfg.state_file)
            .arg(cfg.reconfigure ? "on" : "off");
    } catch (const std::exception& ex) {
        LOG_ERROR(mast::mast_logger, mast::MAST_LOAD_FAILED).arg(ex.what());
        push.reset();
        return 1;
    }
    return 0;
}

int unload() {
    if (push) {
        push->shutdown();
        push.reset();
    }
    return 0;
}

int dhcp6_srv_configured(CalloutHandle& handle) {
    if (push) {
        try {
            ConstElementPtr config;
            handle.getArgument("json_config", config);
            push->refreshLinks(config);
        } catch (const std::exception& ex) {
            LOG_ERROR(mast::mast_logger, mast::MAST_CALLOUT_ERROR)
                .arg("dhcp6_srv_configured")
                .arg(ex.what());
        }
    }
    return 0;
}

int lease6_renew(CalloutHandle& handle) { return adjustLeaseCallout(handle, "lease6_renew"); }

int lease6_rebind(CalloutHandle& handle) { return adjustLeaseCallout(handle, "lease6_rebind"); }

int pkt6_send(CalloutHandle& handle) {
    if (!push) {
        return 0;
    }
    try {
        isc::dhcp::Pkt6Ptr query;
        isc::dhcp::Pkt6Ptr response;
        handle.getArgument("query6", query);
        handle.getArgument("response6", response);
        mast::PrefixPush::SavedPreferred saved;
        if (push->anyNonPreferred()) {
            try {
                handle.getContext(SAVED_PREFERRED, saved);
            } catch (const NoSuchCalloutContext&) {
                // No lease of a non-preferred prefix in this packet.
            }
        }
        if (response) {
            push->rewriteResponse(query, response, saved);
        }
    } catch (const std::exception& ex) {
        // A bad packet must never take the server down: log and send Kea's own answer.
        LOG_ERROR(mast::mast_logger, mast::MAST_CALLOUT_ERROR).arg("pkt6_send").arg(ex.what());
    }
    return 0;
}

}  // extern "C"
