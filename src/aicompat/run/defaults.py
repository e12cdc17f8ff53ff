"""The limits and defaults ``aicompat --help`` states, apart from the modules that apply
them: the command line builds its parser before it loads any of those."""

MAX_TIMEOUT = 1e6  # seconds per file: more is no limit, and the timer cannot hold 1e308
# max-file-size, in MB: LibCST needs ~0.6 GB per MB of source (parallel.too_large); past
# 100 MB no machine this runs on parses the file, so a larger limit is a mistake.
MAX_FILE_SIZE_MB = 100.0
# The cache's folder, next to pyproject.toml (run/cache.py keeps what is in it).
CACHE_DIR = ".aicompat_cache"
