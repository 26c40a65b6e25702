"""noproxy."""
