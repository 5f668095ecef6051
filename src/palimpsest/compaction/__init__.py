"""Context engines and the default compressor."""
