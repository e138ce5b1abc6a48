"""The NETCONF router agent: a Linux + BIRD 2 router behind the `urn:mast:router:1` model."""
