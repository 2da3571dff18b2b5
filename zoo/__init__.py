"""Model zoo: runs small models under `iwh capture` across torch versions (see README.md)."""
