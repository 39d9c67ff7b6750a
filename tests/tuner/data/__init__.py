"""Tests of tuner/data/."""
