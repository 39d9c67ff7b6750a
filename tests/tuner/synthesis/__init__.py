"""Tests of tuner/synthesis/."""
