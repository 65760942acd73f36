"""city360.synth."""
