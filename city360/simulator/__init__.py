"""city360.simulator."""
