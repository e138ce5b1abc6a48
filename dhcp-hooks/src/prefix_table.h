// The status of each provider prefix served by this Kea (preferred / discouraged / withdrawn),
// persisted in a small JSON state file so a Kea restart keeps it, plus the push replay counter.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mast {

enum class PrefixStatus : uint8_t { Preferred = 0, Discouraged = 1, Withdrawn = 2 };

std::string statusName(PrefixStatus status);
// Throws std::invalid_argument naming the accepted values.
PrefixStatus parseStatus(const std::string& text);

struct Prefix {
    std::array<uint8_t, 16> bytes{};
    uint8_t length = 0;

    // Throws std::invalid_argument for anything but an IPv6 prefix with clear host bits.
    static Prefix parse(const std::string& text);
    std::string str() const;
    bool contains(const std::array<uint8_t, 16>& addr) const;
    bool operator<(const Prefix& o) const {
        return length != o.length ? length < o.length : bytes < o.bytes;
    }
    bool operator==(const Prefix& o) const { return length == o.length && bytes == o.bytes; }
};

struct PrefixState {
    Prefix prefix;
    PrefixStatus status = PrefixStatus::Preferred;
    // Lifetimes the operator asked for; absent = derived from Kea's own lease lifetimes.
    std::optional<uint32_t> preferred_lifetime;
    std::optional<uint32_t> valid_lifetime;
};

class PrefixTable {
public:
    explicit PrefixTable(std::string state_file) : state_file_(std::move(state_file)) {}

    // Reads the state file if it exists; throws std::runtime_error on a corrupt file.
    void load();
    // Writes the state file atomically; returns an error text, empty on success.
    std::string save();

    PrefixState get(const Prefix& prefix) const;
    std::vector<PrefixState> all() const;
    // Returns the previous status.
    PrefixStatus set(const PrefixState& state);

    // Replay counter: strictly increasing over the life of the state file (and seeded from the
    // clock so that losing the file does not make hosts reject every later push).
    uint64_t currentCounter() const;

    // Lock-free fast path for the per-packet callouts: false while every prefix is preferred.
    bool anyNonPreferred() const { return non_preferred_.load(std::memory_order_relaxed) > 0; }
    uint64_t nextCounter();

    const std::string& stateFile() const { return state_file_; }

private:
    std::string state_file_;
    mutable std::mutex mutex_;
    std::map<Prefix, PrefixState> states_;
    uint64_t counter_ = 0;
    std::atomic<int> non_preferred_{0};

    void recount();  // with mutex_ held
};

}  // namespace mast
