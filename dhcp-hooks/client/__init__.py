"""Host side of Broadcast Prefix Push: applies authenticated prefix status pushes via netlink."""
