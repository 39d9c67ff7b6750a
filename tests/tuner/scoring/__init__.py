"""Tests of tuner/scoring/."""
