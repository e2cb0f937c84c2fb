"""breaks."""
