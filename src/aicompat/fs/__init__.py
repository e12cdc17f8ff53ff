"""The file system, confined: reading only what belongs to the linted tree, the cache's link-safe
files, and the walk from paths to the files to lint."""
