"""Tests of tuner/config/."""
