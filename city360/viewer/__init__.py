"""city360.viewer."""
