"""The stdio front: the process that owns stdin and stdout, answers the handshake from recorded
answers while the SDK loads, and hands everything else to the SDK."""
