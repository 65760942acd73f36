"""city360.pose_graph."""
