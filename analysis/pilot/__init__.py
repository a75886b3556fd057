"""Pilot's methods (Li et al.): stable-phase detection, subsession statistics, run length, WPS, Welch."""
