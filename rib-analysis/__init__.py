"""Classify ASes in MRT RIB dumps and project the routing table under MAST/LIMA."""
