"""The version-matrix builder (``aicompat matrix build``): reads package releases; never
imported at lint time."""
