"""What a run says: output formats, baselines, --fix and --diff, the rule documentation."""
