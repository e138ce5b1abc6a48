"""Foundations shared by every MAST daemon: config, logging, metrics, prefix model, netns."""
