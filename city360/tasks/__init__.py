"""city360.tasks."""
