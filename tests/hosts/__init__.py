"""Real agent hosts driven end to end: installs, scripted fake models, and the host tests' helpers."""
