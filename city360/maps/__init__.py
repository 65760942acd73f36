"""city360.maps."""
