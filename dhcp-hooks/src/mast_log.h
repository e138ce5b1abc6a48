// Logger and message IDs of the MAST hook (the shape of a Kea *.mes catalogue, written by hand
// because Debian's kea-dev ships no message compiler). IDs are stable: grep for them.
#pragma once

#include <log/logger.h>
#include <log/macros.h>
#include <log/message_types.h>

namespace mast {

extern isc::log::Logger mast_logger;

extern const isc::log::MessageID MAST_LOAD_OK;
extern const isc::log::MessageID MAST_LOAD_FAILED;
extern const isc::log::MessageID MAST_STATE_LOADED;
extern const isc::log::MessageID MAST_STATE_SAVE_FAILED;
extern const isc::log::MessageID MAST_STATE_CORRUPT;
extern const isc::log::MessageID MAST_STATUS_SET;
extern const isc::log::MessageID MAST_PUSH_SENT;
extern const isc::log::MessageID MAST_PUSH_FAILED;
extern const isc::log::MessageID MAST_RECONFIGURE_SENT;
extern const isc::log::MessageID MAST_RECONFIGURE_FAILED;
extern const isc::log::MessageID MAST_SIBLING_SKIPPED;
extern const isc::log::MessageID MAST_CALLOUT_ERROR;

}  // namespace mast
