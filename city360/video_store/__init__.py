"""city360.video_store."""
