"""Helpers more than one rule uses (attention kernels' names and release spans)."""
