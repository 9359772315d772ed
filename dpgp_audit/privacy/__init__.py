"""How much noise, and what it buys: claims, calibrations, conversions, primitive mechanisms.

Pure maths; nothing here knows about Gaussian-process models.
"""
