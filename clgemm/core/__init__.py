"""The lowest layer: errors, the problem, settings, files and locks, checks of values read back from
files, terminal tables. Nothing here knows a device."""
