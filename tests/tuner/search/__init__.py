"""Tests of tuner/search/."""
