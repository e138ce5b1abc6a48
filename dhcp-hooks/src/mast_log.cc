#include "mast_log.h"

#include <log/message_initializer.h>

namespace mast {

isc::log::Logger mast_logger("mast-push");

const isc::log::MessageID MAST_LOAD_OK = "MAST_LOAD_OK";
const isc::log::MessageID MAST_LOAD_FAILED = "MAST_LOAD_FAILED";
const isc::log::MessageID MAST_STATE_LOADED = "MAST_STATE_LOADED";
const isc::log::MessageID MAST_STATE_SAVE_FAILED = "MAST_STATE_SAVE_FAILED";
const isc::log::MessageID MAST_STATE_CORRUPT = "MAST_STATE_CORRUPT";
const isc::log::MessageID MAST_STATUS_SET = "MAST_STATUS_SET";
const isc::log::MessageID MAST_PUSH_SENT = "MAST_PUSH_SENT";
const isc::log::MessageID MAST_PUSH_FAILED = "MAST_PUSH_FAILED";
const isc::log::MessageID MAST_RECONFIGURE_SENT = "MAST_RECONFIGURE_SENT";
const isc::log::MessageID MAST_RECONFIGURE_FAILED = "MAST_RECONFIGURE_FAILED";
const isc::log::MessageID MAST_SIBLING_SKIPPED = "MAST_SIBLING_SKIPPED";
const isc::log::MessageID MAST_CALLOUT_ERROR = "MAST_CALLOUT_ERROR";

namespace {

const char* messages[] = {
    "MAST_LOAD_OK", "MAST hook loaded: push message type %1, state file %2, reconfigure %3",
    "MAST_LOAD_FAILED", "MAST hook failed to load: %1",
    "MAST_STATE_LOADED", "MAST prefix state loaded from %1: %2 prefixes, push counter %3",
    "MAST_STATE_SAVE_FAILED", "MAST prefix state could not be saved to %1: %2",
    "MAST_STATE_CORRUPT", "MAST state file unusable (%1): moved to %2, all prefixes preferred",
    "MAST_STATUS_SET", "MAST prefix %1 is now %2 (was %3)",
    "MAST_PUSH_SENT", "MAST Broadcast Prefix Push for %1 sent on %2 (counter %3)",
    "MAST_PUSH_FAILED", "MAST Broadcast Prefix Push on %1 failed: %2",
    "MAST_RECONFIGURE_SENT", "MAST Reconfigure (Renew) sent to %1 on %2",
    "MAST_RECONFIGURE_FAILED", "MAST Reconfigure to %1 on %2 failed: %3",
    "MAST_SIBLING_SKIPPED", "MAST sibling address %1 not added: %2",
    "MAST_CALLOUT_ERROR", "MAST callout %1 failed: %2",
    nullptr};

const isc::log::MessageInitializer initializer(messages);

}  // namespace
}  // namespace mast
