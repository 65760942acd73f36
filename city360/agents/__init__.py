"""city360.agents."""
