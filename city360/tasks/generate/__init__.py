"""Task generators: from a synthetic city's ground truth, or from a real city's graph + OSM."""

from city360.tasks.generate.common import GenerationContext, GenerationReport, ImageSource

__all__ = ["GenerationContext", "GenerationReport", "ImageSource"]
