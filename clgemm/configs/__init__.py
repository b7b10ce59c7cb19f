"""Configurations: tuning databases, the lookup that ranks their entries, the configuration a tool
runs and the launch it is made ready as."""
