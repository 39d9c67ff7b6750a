"""Tests of tuner/release/."""
