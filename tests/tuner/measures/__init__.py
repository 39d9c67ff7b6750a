"""Tests of tuner/measures/."""
