"""Stub Reachability Management System: discourages a provider's prefixes when its access link fails."""
