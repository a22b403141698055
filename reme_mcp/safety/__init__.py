"""What keeps memory safe to recall and to store: the <reme-context> boundary and secret detection."""
