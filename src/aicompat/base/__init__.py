"""Leaves every layer may use: the exceptions that end a run, the TOML reader, where the shipped
data lives, and the diagnostic record."""
