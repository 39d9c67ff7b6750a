"""``python -m tuner.config``: print the config reference (``docs/config.md``)."""

from tuner.config import reference

print(reference(), end="")
