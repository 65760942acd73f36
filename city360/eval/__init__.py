"""city360.eval."""
