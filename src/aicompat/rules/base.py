"""Compatibility re-export: the rule API lives in ``aicompat.ruleapi``."""

from __future__ import annotations

from ..ruleapi import CallSite, Example, FileContextProtocol, Finding, Rule

__all__ = ["CallSite", "Example", "FileContextProtocol", "Finding", "Rule"]
